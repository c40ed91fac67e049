"""`to_polars`: a Polars `LazyFrame` over one table of a pinned commit.

The frame scans the pinned Lance dataset through `polars.scan_pyarrow_dataset`, so
Polars pushes column selections and filters down to Lance (only what the query needs is
read); `columns=` narrows it up front. Filter with Polars expressions (there is no
`where=`: graphlake's filter grammar and a Polars predicate would not combine)::

    lf = g.to_polars("Sample", rev="v1")
    lf.filter(pl.col("label") == 3).select("id", "emb").collect()

The read lease is held while the LazyFrame (which references the pinned dataset) lives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphlake.readers.extras import require

pl = require("polars")

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot

__all__ = ["to_polars"]


def to_polars(
    snapshot: Snapshot,
    type: str,
    columns: Sequence[str] | None = None,
    *,
    lease_s: float | None = None,
) -> Any:
    # All columns unless named (Blob columns too: projection pushdown leaves them unread).
    scan = snapshot.scan(type, columns, lease_s=lease_s)
    try:
        ds = scan.dataset
        frame = pl.scan_pyarrow_dataset(ds)
        if columns is not None:
            frame = frame.select(list(scan.columns))
    except BaseException:
        scan.close()
        raise
    ds._graphlake_scan = scan  # the frame references `ds`, so the lease lives with it
    return frame
