"""What one side changed in one table since the merge base, as keys and row images.

Discovery finds the candidate keys; the rows of those keys are then read by key (BTREE
index) at both states and compared, so a key whose changes net to zero is no change.
The discovery path here is the full walk (a DuckDB anti-join over the two pinned states,
which spills to disk under its memory limit); lineage discovery plugs in beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import lance

from graphlake.catalog.commits import TableState
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.tables import TableStore

Row = dict[str, Any]


@dataclass
class TableDelta:
    """Changes of one side against the base: `base[k]` / `side[k]` are the row images
    (absent when the key did not exist there) for every changed key `k`."""

    keys: set[str] = field(default_factory=set)
    base: dict[str, Row] = field(default_factory=dict)
    side: dict[str, Row] = field(default_factory=dict)
    path: str = "none"
    rows_scanned: int = 0

    def inserted(self) -> list[str]:
        return sorted(k for k in self.keys if k not in self.base)

    def deleted(self) -> list[str]:
        return sorted(k for k in self.keys if k not in self.side)

    def updated(self) -> list[str]:
        return sorted(k for k in self.keys if k in self.base and k in self.side)

    @property
    def only_inserts(self) -> bool:
        return all(k not in self.base for k in self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)


def discover(tables: TableStore, base: TableState | None, side: TableState) -> TableDelta:
    """The changes from `base` to `side` (same table identity; `base` None = empty)."""
    if base is not None and _same(base, side):
        return TableDelta(path="same-state")
    side_ds = tables.open(side)
    base_ds = tables.open(base) if base is not None else None
    candidates, scanned = _walk_candidates(base_ds, side_ds)
    delta = rows_for(base_ds, side_ds, candidates)
    delta.path = "walk"
    delta.rows_scanned = scanned
    return delta


def rows_for(
    base_ds: lance.LanceDataset | None, side_ds: lance.LanceDataset, candidates: set[str]
) -> TableDelta:
    """Read the candidates' rows at both states and keep the keys that really differ."""
    keys = sorted(candidates)
    base_rows = _by_id(rows_where_in(base_ds, "id", keys)) if base_ds is not None else {}
    side_rows = _by_id(rows_where_in(side_ds, "id", keys))
    changed = {k for k in keys if base_rows.get(k) != side_rows.get(k)}
    return TableDelta(
        keys=changed,
        base={k: r for k, r in base_rows.items() if k in changed},
        side={k: r for k, r in side_rows.items() if k in changed},
    )


def _same(a: TableState, b: TableState) -> bool:
    return (a.table_id, a.lance_branch, a.version) == (b.table_id, b.lance_branch, b.version)


def _by_id(table: Any) -> dict[str, Row]:
    return {r["id"]: r for r in table.to_pylist()}


def _walk_candidates(
    base_ds: lance.LanceDataset | None, side_ds: lance.LanceDataset
) -> tuple[set[str], int]:
    """Keys whose rows differ between the two states, by a full outer join on `id`."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        con.register("s", side_ds)
        scanned = side_ds.count_rows()
        if base_ds is None:
            rows = con.execute("SELECT id FROM s").fetchall()
            return {r[0] for r in rows}, scanned
        con.register("b", base_ds)
        scanned += base_ds.count_rows()
        rows = con.execute(
            "SELECT coalesce(b.id, s.id) FROM b FULL OUTER JOIN s ON b.id = s.id "
            "WHERE b.id IS NULL OR s.id IS NULL OR b IS DISTINCT FROM s"
        ).fetchall()
        return {r[0] for r in rows}, scanned
    finally:
        con.close()
