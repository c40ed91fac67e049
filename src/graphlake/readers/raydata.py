"""`to_ray`: a Ray Data `Dataset` over one table of a pinned commit.

Each read task reads whole Lance fragments of the pinned table state (a task opens the
graph root itself, so tasks run on any node of the cluster that can reach the root);
the driver process holds the scan's read lease while the `Dataset` object lives, or
until `dataset._graphlake_scan.close()`::

    ds = g.to_ray("Sample", rev="v1", columns=["id", "emb"])
    ds.map_batches(embed).write_parquet(...)

`parallelism` bounds the number of read tasks (default: Ray's own choice, at most one
task per fragment).

A Blob column (only when named in `columns`) holds, with `blobs="lazy"` (the default),
one `graphlake.read.blobs.BlobRef` per row (Ray keeps them as Python objects; no blob
bytes are read by the read tasks): resolve them where they are needed, a batch at a time
(`graphlake.read_blobs(batch["raw"])` in `map_batches`). `blobs="bytes"` reads the bytes
in the read tasks (a `binary` column).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.errors import ReaderError
from graphlake.read.scan import Scan, ScanSpec, Slice
from graphlake.readers.extras import require

ray = require("ray")
from ray.data.block import BlockMetadata  # noqa: E402  (after the extra check)
from ray.data.datasource import Datasource, ReadTask  # noqa: E402

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot

__all__ = ["PinnedDatasource", "to_ray"]


def to_ray(
    snapshot: Snapshot,
    type: str,
    columns: Sequence[str] | None = None,
    *,
    where: str | None = None,
    batch_size: int | None = None,
    parallelism: int = -1,
    lease_s: float | None = None,
    blobs: str = "lazy",
) -> Any:
    if (
        isinstance(parallelism, bool)
        or not isinstance(parallelism, int)
        or (parallelism < 1 and parallelism != -1)
    ):
        raise ReaderError(
            f"parallelism is a whole number >= 1 (or -1: Ray decides), not {parallelism!r}"
        )
    scan = snapshot.scan(type, columns, where, batch_size=batch_size, lease_s=lease_s, blobs=blobs)
    try:
        source = PinnedDatasource(scan)
        dataset = ray.data.read_datasource(
            source, override_num_blocks=(None if parallelism == -1 else parallelism)
        )
    except BaseException:
        scan.close()
        raise
    dataset._graphlake_scan = scan  # the lease lives as long as the Dataset object
    dataset._graphlake_source = source
    return dataset


def _read(spec: ScanSpec, slices: list[Slice]) -> Iterator[Any]:
    for batch in spec.read_slices(slices):
        if not spec.lazy_blobs:
            yield pa.Table.from_batches([batch])
            continue
        # Handles are Python objects: a pandas block carries them (Ray pickles them).
        frame = batch.to_pandas()
        for column in spec.lazy_blobs:
            frame[column] = spec.blob_refs(batch, column)
        yield frame


class PinnedDatasource(Datasource):
    """Read tasks over whole fragments of one pinned table."""

    def __init__(self, scan: Scan) -> None:
        self.spec = scan.spec()
        self.fragments = [(fid, n) for fid, n in scan.fragments() if n]
        # A lazy Blob column is Python objects, which an Arrow schema cannot name.
        self.arrow_schema = None if scan.lazy_blobs else scan.schema
        self.row_bytes = _row_bytes(scan)

    def get_name(self) -> str:
        return f"graphlake({self.spec.table})"

    def estimate_inmemory_data_size(self) -> int | None:
        return self.row_bytes * sum(n for _, n in self.fragments)

    def get_read_tasks(
        self, parallelism: int, per_task_row_limit: int | None = None, data_context: Any = None
    ) -> list[ReadTask]:
        groups = max(1, min(parallelism, len(self.fragments)))
        tasks = []
        for g in range(groups):
            mine = self.fragments[g::groups]
            if not mine:
                continue
            slices = [Slice(fid, 0, n) for fid, n in mine]
            rows = sum(n for _, n in mine)
            meta = BlockMetadata(
                num_rows=rows, size_bytes=rows * self.row_bytes, exec_stats=None, input_files=None
            )
            spec = self.spec
            tasks.append(
                ReadTask(
                    functools.partial(_read, spec, slices),
                    meta,
                    schema=self.arrow_schema,
                    per_task_row_limit=per_task_row_limit,
                )
            )
        return tasks


def _row_bytes(scan: Scan) -> int:
    """A rough in-memory size of one row (Ray plans its blocks with it)."""
    total = 0
    for field in scan.schema:
        t = field.type
        size = t.list_size if pa.types.is_fixed_size_list(t) else 1
        try:
            width = (t.value_type if pa.types.is_fixed_size_list(t) else t).bit_width
        except ValueError:  # variable width: strings, binary, lists
            width = 256
        total += size * max(1, width // 8)
    return total
