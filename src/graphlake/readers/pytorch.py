"""`to_torch`: a PyTorch `IterableDataset` over one table of a pinned commit.

It yields whole batches (dicts of column -> tensor or list), so give the `DataLoader`
`batch_size=None`, and, because Lance is not fork-safe, a spawn or forkserver context
for workers::

    ds = g.to_torch("Sample", rev="v1", columns=["emb", "label"], batch_size=256,
                    shuffle=7, rank=rank, world_size=world_size, drop_last=True)
    loader = DataLoader(ds, batch_size=None, num_workers=4,
                        multiprocessing_context="spawn", persistent_workers=False)
    for epoch in range(3):
        ds.set_epoch(epoch)
        for batch in loader: ...   # batch["emb"]: float32 tensor (rows, dim)

Sharding across ranks and DataLoader workers, padding and `drop_last`, and the shuffle
are those of `graphlake.readers.shard`: each row exactly once per epoch across ranks
(with `drop_last=False`, up to `world_size - 1` padding rows are repeated), the same
number of batches on every rank, the same order for the same seed and epoch.

Columns become: Vector -> a float tensor of shape (rows, dim); integer, float and Bool
scalars -> 1-D tensors (an integer column with nulls becomes float64 with NaN); other
columns (strings, dates, lists) -> Python lists. A Blob column (only when named in
`columns`) becomes a list per batch: with `blobs="lazy"` (the default) of
`graphlake.read.blobs.BlobRef` handles, no blob bytes read, so a worker or the training
step reads what it needs (`graphlake.read_blobs(batch["raw"])`: one Lance take for the
batch); with `blobs="bytes"` of `bytes` (None for a null blob). A blob is never a tensor:
any other `blobs=` is refused (`ReaderError`, naming the column and the option). The
dataset holds the scan's read lease in the process that made it; worker processes read
the pinned state (and resolve handles) without leases of their own. `close()` releases
the lease (so does garbage collection): handles read after that may fail once `gc` ran.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.errors import ReaderError
from graphlake.read.scan import Scan, ScanSpec
from graphlake.readers.extras import require
from graphlake.readers.shard import Layout, check_rank, layout, window_permutation

torch = require("torch")

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot

__all__ = ["PinnedTorchDataset", "to_torch"]

CHUNK_ROWS = 16_384  # rows of one shuffled piece of a fragment
SHUFFLE_WINDOW = 8  # batches per in-worker shuffle window


def to_torch(
    snapshot: Snapshot,
    type: str,
    columns: Sequence[str] | None = None,
    *,
    where: str | None = None,
    batch_size: int = 1024,
    shuffle: int | None = None,
    rank: int = 0,
    world_size: int = 1,
    drop_last: bool = False,
    chunk_rows: int = CHUNK_ROWS,
    shuffle_window: int = SHUFFLE_WINDOW,
    lease_s: float | None = None,
    blobs: str = "lazy",
) -> PinnedTorchDataset:
    check_rank(rank, world_size)
    if shuffle is not None and (
        isinstance(shuffle, bool) or not isinstance(shuffle, int) or shuffle < 0
    ):
        raise ReaderError(f"shuffle is a seed (a whole number >= 0) or None, not {shuffle!r}")
    for name, value in (("chunk_rows", chunk_rows), ("shuffle_window", shuffle_window)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ReaderError(f"{name} is a whole number of at least 1, not {value!r}")
    scan = snapshot.scan(type, columns, where, batch_size=batch_size, lease_s=lease_s, blobs=blobs)
    try:
        return PinnedTorchDataset(
            scan,
            rank=rank,
            world_size=world_size,
            drop_last=bool(drop_last),
            seed=shuffle,
            chunk_rows=chunk_rows,
            shuffle_window=shuffle_window,
        )
    except BaseException:
        scan.close()
        raise


class PinnedTorchDataset(torch.utils.data.IterableDataset):  # type: ignore[name-defined]
    """Batches of one pinned table for one rank; see the module docstring."""

    def __init__(
        self,
        scan: Scan,
        *,
        rank: int,
        world_size: int,
        drop_last: bool,
        seed: int | None,
        chunk_rows: int,
        shuffle_window: int,
    ) -> None:
        super().__init__()
        self._scan: Scan | None = scan
        self.spec: ScanSpec = scan.spec()
        self.commit_id = scan.commit_id
        self.fragments = scan.fragments()
        self.rank, self.world_size, self.drop_last = rank, world_size, drop_last
        self.seed, self.chunk_rows, self.shuffle_window = seed, chunk_rows, shuffle_window
        self.batch_size = scan.batch_size
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration reads (it changes the shuffle, nothing else)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ReaderError(f"an epoch is a whole number >= 0, not {epoch!r}")
        self.epoch = epoch

    def layout(self) -> Layout:
        return layout(
            self.fragments,
            world_size=self.world_size,
            batch_size=self.batch_size,
            drop_last=self.drop_last,
            seed=self.seed,
            epoch=self.epoch,
            chunk_rows=self.chunk_rows,
        )

    def __len__(self) -> int:
        """Batches per epoch on this rank (the same on every rank)."""
        return self.layout().batches_per_rank

    def close(self) -> None:
        """Release the read lease (in the process that made the dataset)."""
        if self._scan is not None:
            self._scan.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_scan"] = None  # the lease stays with the process that made the dataset
        return state

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        plan = self.layout()
        start, stop = plan.worker_range(self.rank, worker, workers)
        if start >= stop:
            return
        ds = self._scan.dataset if self._scan is not None else self.spec.open()
        batches = self.spec.read_slices(plan.slices(start, stop), ds)
        window = self.batch_size * (self.shuffle_window if self.seed is not None else 1)
        for index, table in enumerate(_windows(batches, window, self.spec.columns)):
            if self.seed is not None:
                order = window_permutation(
                    table.num_rows, self.seed, self.epoch, self.rank, worker, index
                )
                table = table.take(pa.array(order))
            for off in range(0, table.num_rows, self.batch_size):
                yield to_tensors(table.slice(off, self.batch_size), self.spec)


def _windows(
    batches: Iterator[pa.RecordBatch], rows: int, columns: Sequence[str]
) -> Iterator[pa.Table]:
    """Tables of exactly `rows` rows (the last may be shorter) from a batch stream."""
    held: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        held.append(batch)
        count += batch.num_rows
        while count >= rows:
            table = pa.Table.from_batches(held).combine_chunks()
            yield table.slice(0, rows)
            rest = table.slice(rows)
            held, count = rest.to_batches(), rest.num_rows
    if count:
        yield pa.Table.from_batches(held).combine_chunks()


def to_tensors(table: pa.Table, spec: ScanSpec | None = None) -> dict[str, Any]:
    """One batch as column -> tensor (vectors, numbers, Bool) or list (anything else; a
    lazy Blob column of `spec`: a list of `BlobRef`)."""
    lazy = () if spec is None else spec.lazy_blobs
    return {
        name: spec.blob_refs(table, name)
        if spec is not None and name in lazy
        else _column(name, table.column(name).combine_chunks())
        for name in table.column_names
    }


def _writable(a: np.ndarray) -> np.ndarray:
    return a if a.flags.writeable else a.copy()


def _column(name: str, arr: pa.Array) -> Any:
    t = arr.type
    if pa.types.is_fixed_size_list(t) and (
        pa.types.is_floating(t.value_type) or pa.types.is_integer(t.value_type)
    ):
        if arr.null_count:
            raise ReaderError(
                f"vector column {name!r} has nulls in this batch: filter them "
                f"out (where=) or fill them before reading it as a tensor"
            )
        flat = pc.list_flatten(arr).to_numpy(zero_copy_only=False)
        return torch.from_numpy(_writable(flat).reshape(len(arr), t.list_size))
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        values = arr.to_numpy(zero_copy_only=False)
        if values.dtype != object:
            return torch.from_numpy(_writable(values))
    return arr.to_pylist()
