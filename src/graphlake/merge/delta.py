"""What one side changed in one table since the merge base, as keys and row images.

Discovery finds candidate keys; the rows of those keys are then read by key (BTREE
index) at both states and compared, so a key whose changes net to zero is no change.

Two discovery paths:
- lineage (`merge.lineage`): Lance's version deltas along the branch tree, O(changed rows);
- walk: every row of both states as a narrow (id, row hash) pair, joined in DuckDB under
  a memory limit (spilling to disk); payload columns are hashed while streaming, never
  held. Exceeding the budget raises `MergeMemoryError`; it never returns a partial result.
`lineage="on"` tries lineage and falls back to the walk with a recorded reason; "off"
walks; "verify" runs both and raises `LineageMismatchError` on any difference.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

import duckdb
import lance
import pyarrow as pa

from graphlake import probes
from graphlake.catalog.commits import TableState
from graphlake.errors import LineageMismatchError, MergeError, MergeMemoryError
from graphlake.merge import lineage as lin
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.tables import TableStore

Row = dict[str, Any]
LINEAGE_MODES = ("on", "off", "verify")
DEFAULT_MEMORY_BUDGET = 256 * 1024 * 1024


class TableDelta:
    """Changes of one side against the base: `base[k]` / `side[k]` are the row images
    (absent when the key did not exist there) for every changed key `k`.

    When every change is an insert found by lineage, the side's rows stay an Arrow table
    (`rows`) and the `side` dict is only built if something asks for it: an insert-only
    merge of a million rows never turns them into Python objects.
    """

    def __init__(
        self,
        keys: set[str] | None = None,
        base: dict[str, Row] | None = None,
        side: dict[str, Row] | None = None,
        *,
        rows: pa.Table | None = None,
        path: str = "none",
    ) -> None:
        self.keys: set[str] = set(keys or ())
        self.base: dict[str, Row] = dict(base or {})
        self._side = side
        self.rows = rows  # the side's rows of all `keys`, when all are inserts
        self.path = path  # "same-state" | "lineage" | "walk" | "verified" (both agreed)
        self.fallback: str | None = None  # why lineage was not used, when it was tried
        self.candidates = 0
        self.rows_scanned = 0  # rows the discovery itself read (deltas or walk)

    @property
    def side(self) -> dict[str, Row]:
        if self._side is None:
            self._side = _by_id(self.rows) if self.rows is not None else {}
        return self._side

    def side_table(self, schema: pa.Schema) -> pa.Table:
        """The side's rows of every changed key that exists there, as Arrow."""
        if self.rows is not None:
            return self.rows.cast(schema)
        return pa.Table.from_pylist([self.side[k] for k in sorted(self.side)], schema=schema)

    def inserted(self) -> list[str]:
        return sorted(k for k in self.keys if k not in self.base)

    def deleted(self) -> list[str]:
        if self.rows is not None:
            return []
        return sorted(k for k in self.keys if k not in self.side)

    def updated(self) -> list[str]:
        return sorted(k for k in self.keys if k in self.base and k in self.side)

    @property
    def only_inserts(self) -> bool:
        return self.rows is not None or all(k not in self.base for k in self.keys)

    def __bool__(self) -> bool:
        return bool(self.keys)


@dataclass(frozen=True)
class DiscoverySettings:
    lineage: str = "on"
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    candidate_budget: int = lin.DEFAULT_CANDIDATE_BUDGET

    @classmethod
    def resolve(cls, lineage: str | None, memory_budget: int | None) -> DiscoverySettings:
        mode = lineage or os.environ.get("GRAPHLAKE_MERGE_LINEAGE", "on")
        if mode not in LINEAGE_MODES:
            raise MergeError(f"lineage must be one of {', '.join(LINEAGE_MODES)}, not {mode!r}")
        budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
        if budget < 16 * 1024 * 1024:
            raise MergeError("memory_budget must be at least 16 MiB")
        return cls(mode, budget)


def discover(
    tables: TableStore,
    base: TableState,
    side: TableState,
    settings: DiscoverySettings = DiscoverySettings(),
    role: str = "source",
) -> TableDelta:
    """The changes from `base` to `side` (two states of one table)."""
    if _same(base, side):
        return TableDelta(path="same-state")
    lineage_delta: TableDelta | None = None
    fallback: str | None = None
    if settings.lineage in ("on", "verify"):
        try:
            found = lin.candidates(tables, base, side, settings.candidate_budget)
        except lin.LineageUnavailable as exc:
            fallback = exc.reason.value
        else:
            if found.inserted is not None:  # only new rows: the deltas already hold them
                lineage_delta = TableDelta(found.keys, rows=found.inserted)
            else:
                lineage_delta = rows_for(tables.open(base), tables.open(side), found.keys)
            lineage_delta.path = "lineage"
            lineage_delta.candidates = len(found.keys)
            lineage_delta.rows_scanned = found.rows_read
            probes.add("discovery_rows", found.rows_read)
            if settings.lineage == "on":
                return lineage_delta
    walk_delta = _walk(tables, base, side, settings.memory_budget, role)
    walk_delta.fallback = fallback
    if settings.lineage == "verify" and lineage_delta is not None:
        _verify(base.table_id, role, lineage_delta, walk_delta)
        walk_delta.path = "verified"  # both paths ran and agree
    return walk_delta


def _verify(table_id: str, role: str, a: TableDelta, b: TableDelta) -> None:
    if a.keys != b.keys or a.base != b.base or a.side != b.side:
        only_a = sorted(a.keys - b.keys)[:5]
        only_b = sorted(b.keys - a.keys)[:5]
        raise LineageMismatchError(
            f"table {table_id} ({role}): lineage and walk disagree "
            f"(lineage only: {only_a}, walk only: {only_b})"
        )


def rows_for(
    base_ds: lance.LanceDataset, side_ds: lance.LanceDataset, candidates: set[str]
) -> TableDelta:
    """Read the candidates' rows at both states and keep the keys that really differ."""
    keys = sorted(candidates)
    base_rows = _by_id(rows_where_in(base_ds, "id", keys))
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


def _walk(
    tables: TableStore, base: TableState, side: TableState, budget: int, role: str
) -> TableDelta:
    base_ds, side_ds = tables.open(base), tables.open(side)
    keys, scanned = walk_candidates(base_ds, side_ds, budget, f"{base.table_id} ({role})")
    probes.add("discovery_rows", scanned)
    delta = rows_for(base_ds, side_ds, keys)
    delta.path = "walk"
    delta.candidates = len(keys)
    delta.rows_scanned = scanned
    return delta


def walk_candidates(
    base_ds: lance.LanceDataset, side_ds: lance.LanceDataset, budget: int, what: str
) -> tuple[set[str], int]:
    """Keys whose rows differ, from a full outer join of narrow (id, row hash) pairs.

    Two 64-bit hashes over the columns in opposite orders stand in for the row; only
    these narrow pairs are joined (and spilled when over budget).
    """
    columns = [n for n in side_ds.schema.names if n != "id"]
    fwd = ", ".join(f'"{c}"' for c in columns) or "id"
    rev = ", ".join(f'"{c}"' for c in reversed(columns)) or "id"
    with tempfile.TemporaryDirectory(prefix="graphlake-walk-") as spill:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{budget // (1024 * 1024)}MB'")
            con.execute(f"SET temp_directory = '{spill}'")
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            con.register("b_src", base_ds)
            con.register("s_src", side_ds)
            rows = con.execute(
                f"WITH b AS (SELECT id, hash({fwd}) AS h1, hash({rev}) AS h2 FROM b_src), "
                f"     s AS (SELECT id, hash({fwd}) AS h1, hash({rev}) AS h2 FROM s_src) "
                "SELECT coalesce(b.id, s.id) FROM b FULL OUTER JOIN s ON b.id = s.id "
                "WHERE b.id IS NULL OR s.id IS NULL OR b.h1 <> s.h1 OR b.h2 <> s.h2"
            ).fetchall()
        except duckdb.OutOfMemoryException as exc:
            raise MergeMemoryError(
                f"{what}: the ordered walk needs more than its memory budget of "
                f"{budget // (1024 * 1024)} MiB ({exc}); raise memory_budget"
            ) from None
        finally:
            con.close()
    return {r[0] for r in rows}, base_ds.count_rows() + side_ds.count_rows()
