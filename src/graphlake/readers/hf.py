"""`to_hf`: a Hugging Face `datasets` view of one table of a pinned commit.

- `streaming=False` (default): a `datasets.Dataset` over the scan's Arrow table, kept in
  memory without a further copy (no cache files are written): fine for what fits in
  memory;
- `streaming=True`: a `datasets.IterableDataset` that streams the pinned fragments
  (memory bounded by the batch size); its shards are the fragments, so
  `datasets.distributed.split_dataset_by_node` and DataLoader workers split them.

::

    ds = g.to_hf("Sample", rev="v1", columns=["text", "label"])
    ds = ds.with_format("torch")

A Blob column (only when named in `columns`) is read as bytes: Arrow, which `datasets`
is built on, holds no `BlobRef` handles, so `blobs="lazy"` is refused here (use
`to_torch`, `to_ray` or `snapshot.scan(..., blobs="lazy")` for handles).

The in-memory `Dataset` holds everything it read, so its read lease is released once it
is built. A streaming dataset's lease is held by the process that made it until that
object is garbage collected: keep it referenced while streaming (copies that
`with_format` or `map` make do not hold it; `datasets` deep-copies freely, so the lease
is not an attribute of the dataset).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from graphlake.errors import ReaderError
from graphlake.read.scan import ScanSpec, Slice
from graphlake.readers.extras import require

datasets = require("datasets")

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot

__all__ = ["to_hf"]


def to_hf(
    snapshot: Snapshot,
    type: str,
    columns: Sequence[str] | None = None,
    *,
    where: str | None = None,
    streaming: bool = False,
    batch_size: int | None = None,
    lease_s: float | None = None,
    blobs: str = "bytes",
) -> Any:
    if blobs == "lazy":
        raise ReaderError(
            "to_hf reads Blob columns as bytes (blobs='bytes'): a datasets.Dataset is Arrow "
            "and holds no BlobRef handles; for lazy handles use to_torch, to_ray or "
            "snapshot.scan(..., blobs='lazy')"
        )
    scan = snapshot.scan(type, columns, where, batch_size=batch_size, lease_s=lease_s, blobs=blobs)
    try:
        if not streaming:
            # after require("datasets") above: a missing extra is its typed error
            from datasets.table import InMemoryTable

            return datasets.Dataset(InMemoryTable(scan.to_table()))
        features = datasets.Features.from_arrow_schema(scan.schema)
        ds = datasets.IterableDataset.from_generator(
            _rows,
            features=features,
            gen_kwargs={
                "spec": scan.spec(),
                "fragments": [fid for fid, n in scan.fragments() if n],
            },
        )
    except BaseException:
        scan.close()
        raise
    finally:
        if not streaming:
            scan.close()
    weakref.finalize(ds, scan.close)
    return ds


def _rows(spec: ScanSpec, fragments: list[int]) -> Iterator[dict[str, Any]]:
    # A list in gen_kwargs is what `datasets` shards: each shard reads whole fragments.
    ds = spec.open()
    counts = {
        f.fragment_id: f.count_rows(spec.filter) if spec.filter else f.count_rows()
        for f in ds.get_fragments()
    }
    for batch in spec.read_slices([Slice(fid, 0, counts[fid]) for fid in fragments], ds):
        yield from batch.to_pylist()
