"""When a branch's search indexes are due for an optimize: the automatic threshold.

Writes and merges leave new rows outside the ANN and full-text indexes (searched exactly,
so results stay right, but every query scans them). `graphlake optimize --if-needed` and
the server's background optimizer (`server/auto_optimize.py`) ask `due` whether a branch
head has passed the threshold, and run the ordinary optimize only then, so no writer ever
pays an index build inside its commit. The check reads index statistics only (manifest
data), never the vectors.

An index is due when (README "Search", "Index lifecycle"):
- a declared index is missing and optimize would build it (a full-text index, or an ANN
  index on a table of at least `indexes.MIN_ANN_ROWS` rows), or an undeclared one is left;
- an ANN index has drifted (`indexes.drifted`: the table grew or deletes shrank it past
  `indexes.RETRAIN_RATIO`, or the declared metric changed), so optimize would retrain it;
- its uncovered rows reach `uncovered_fraction` of the rows it covers, or `uncovered_rows`,
  whichever is smaller (a large table is not left with a huge exact scan).
Otherwise optimize folds the uncovered rows into the index incrementally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlake.errors import SearchError
from graphlake.storage import search_indexes as indexes

if TYPE_CHECKING:
    import lance

    from graphlake.read.snapshot import Snapshot
    from graphlake.schema.model import EdgeType, NodeType

AUTO_UNCOVERED_FRACTION = 0.10  # uncovered rows per row an index covers
AUTO_UNCOVERED_ROWS = 100_000  # ...or this many uncovered rows, whichever comes first


@dataclass(frozen=True)
class Threshold:
    """The point past which a branch's search indexes are worth an optimize."""

    uncovered_fraction: float = AUTO_UNCOVERED_FRACTION
    uncovered_rows: int = AUTO_UNCOVERED_ROWS

    def __post_init__(self) -> None:
        fraction, rows = self.uncovered_fraction, self.uncovered_rows
        if (
            isinstance(fraction, bool)
            or not isinstance(fraction, int | float)
            or not 0 < fraction <= 100
        ):
            raise SearchError(f"uncovered_fraction must be in (0, 100], not {fraction!r}")
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
            raise SearchError(f"uncovered_rows must be a positive integer, not {rows!r}")

    def limit(self, indexed_rows: int) -> int:
        """Uncovered rows that make an index of `indexed_rows` rows due (at least 1)."""
        return max(1, min(self.uncovered_rows, int(self.uncovered_fraction * indexed_rows)))


@dataclass(frozen=True)
class Due:
    """One search index that needs an optimize, and why."""

    table: str
    index: str
    reason: str  # "build", "retrain", "drop" or "uncovered"
    indexed_rows: int
    exact_rows: int

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __str__(self) -> str:
        if self.reason == "uncovered":
            return (
                f"{self.table}.{self.index}: {self.exact_rows} rows uncovered "
                f"({self.indexed_rows} indexed)"
            )
        return f"{self.table}.{self.index}: {self.reason}"


def due(snap: Snapshot, threshold: Threshold | None = None) -> list[Due]:
    """The search indexes of `snap`'s tables that have passed `threshold`."""
    threshold = threshold or Threshold()
    out: list[Due] = []
    for name in snap.schema.table_names:
        t = snap.schema.table(name)
        if t is not None and (t.vector_indexes or t.search or _has_search_index(snap, name)):
            out += _table_due(t, snap.dataset(name), threshold)
    return out


def _has_search_index(snap: Snapshot, name: str) -> bool:
    """Whether the table keeps a search index its schema no longer declares."""
    return any(
        indexes.kind_of(i) in ("vector", "fts")
        for i in indexes.by_name(snap.dataset(name)).values()
    )


def _table_due(t: NodeType | EdgeType, ds: lance.LanceDataset, threshold: Threshold) -> list[Due]:
    existing = indexes.by_name(ds)
    wanted = {indexes.ann_name(p): p for p in t.vector_indexes}
    wanted |= {indexes.fts_name(p): p for p in t.search}
    out = [
        Due(t.name, n, "drop", 0, 0)
        for n, i in existing.items()
        if indexes.kind_of(i) in ("vector", "fts") and n not in wanted
    ]
    rows: int | None = None
    for name, prop in wanted.items():
        if name not in existing:
            rows = ds.count_rows() if rows is None else rows
            is_ann = prop in t.vector_indexes
            if not is_ann or rows >= indexes.MIN_ANN_ROWS:
                out.append(Due(t.name, name, "build", 0, rows))
            continue
        c = indexes.coverage(ds, prop, name)
        if prop in t.vector_indexes and indexes.drifted(ds, prop, t.vector_indexes[prop]):
            out.append(Due(t.name, name, "retrain", c.indexed_rows, c.exact_rows))
        elif c.exact_rows and c.exact_rows >= threshold.limit(c.indexed_rows):
            out.append(Due(t.name, name, "uncovered", c.indexed_rows, c.exact_rows))
    return out


__all__ = ["AUTO_UNCOVERED_FRACTION", "AUTO_UNCOVERED_ROWS", "Due", "Threshold", "due"]
