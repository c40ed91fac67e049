"""The column route: merge a source that only backfilled columns of a table, column-wise.

A backfill commit (`w.set_property`) records `meta["backfill"] = {table: [props]}`. When
every commit on the source's side since the base that changed a table was such a
backfill, the source's changes to that table are values of those columns only. Then:

- the target left the table alone: adopt the source's exact state (O(1));
- otherwise, the keys the target changed since the base (its own, small, delta) merge
  row by row by the usual per-key rule, the source's row being the base's with the
  backfilled columns replaced; every other key takes the source's column values, which
  are written column-wise (`storage.columns`): no row the target did not change is
  copied, and discovery never reads the source's (possibly million) changed rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.catalog.commits import Commit, TableState
from graphlake.errors import UniqueViolationError
from graphlake.merge.conflicts import UNIQUE_VIOLATION, Conflict
from graphlake.merge.rows import Row, merge_key
from graphlake.schema.model import EdgeType, NodeType
from graphlake.storage.lookup import rows_where_in
from graphlake.write.backfill import BACKFILL_META, ColumnWrite, check_unique

SCHEMA_CHANGE_META = "schema_change"  # commit meta of `apply_schema` commits

if TYPE_CHECKING:
    from graphlake.repo import Repo


def backfilled_columns(
    repo: Repo, base: Commit, head: Commit, table: str
) -> tuple[str, ...] | None:
    """The columns of `table` the commits from `base` to `head` changed, if every commit
    that changed the table's state was a single-parent backfill; else None."""
    columns: list[str] = []
    ids = repo.history.ancestors_since(head.id, {base.id}) | {head.id}
    ids.discard(base.id)
    for cid in ids:
        commit = repo.commits.get(cid)
        if commit.tables.get(table) == base.tables.get(table):
            continue
        if SCHEMA_CHANGE_META in commit.meta:
            continue  # a schema commit: the merge evolves the layout itself
        changed = [
            p
            for p in commit.parents
            if repo.commits.get(p).tables.get(table) != commit.tables.get(table)
        ]
        if not changed:
            continue  # a merge that took one parent's state of the table unchanged
        props = (commit.meta.get(BACKFILL_META) or {}).get(table)
        if len(commit.parents) != 1 or not props:
            return None
        columns += [p for p in props if p not in columns]
    return tuple(columns) or None


@dataclass
class ColumnPlan:
    """What the column route does to the target: row changes for the keys the target
    changed (`changes`, merged per key), then column writes for every other key."""

    changes: list[tuple[str, Row | None, Row | None]]
    writes: list[ColumnWrite]
    conflicts: list[Conflict]
    resolved: list[Conflict]


def plan_columns(
    repo: Repo,
    t_type: NodeType | EdgeType,
    columns: tuple[str, ...],
    source: TableState,
    target: TableState,
    dt_keys: set[str],
    dt_base: dict[str, Row],
    dt_side: dict[str, Row],
    strategy: str | None,
) -> ColumnPlan:
    s_ds = repo.tables.open(source)
    plan = ColumnPlan([], [], [], [])
    s_rows = {
        r["id"]: r for r in rows_where_in(s_ds, "id", sorted(dt_keys), ["id", *columns]).to_pylist()
    }
    # The target's rows may predate the backfilled columns (the source added them): they
    # hold the default, or null.
    missing = {c: getattr(t_type.property(c), "default", None) for c in columns}
    for key in sorted(dt_keys):
        b, t = _with(dt_base.get(key), missing), _with(dt_side.get(key), missing)
        if b is None:
            continue  # the target inserted it: the source never had it
        s = {**b, **{c: s_rows[key][c] for c in columns}} if key in s_rows else None
        decision, conflict = merge_key(t_type.name, key, b, s, t, strategy)
        if conflict is not None:
            (plan.resolved if conflict.resolution else plan.conflicts).append(conflict)
        if decision.action == "put":
            plan.changes.append((key, t, decision.row))
        elif decision.action == "delete":
            plan.changes.append((key, t, None))
    values = s_ds.to_table(columns=["id", *columns])
    if dt_keys:
        keep = pc.invert(pc.is_in(values.column("id"), value_set=pa.array(sorted(dt_keys))))
        values = values.filter(keep)
    ids = values.column("id").combine_chunks()
    for c in columns:
        write = ColumnWrite(t_type, c, ids, values.column(c).combine_chunks())
        plan.writes.append(write)
        plan.conflicts += _unique_conflicts(repo, target, write)
    return plan


def _with(row: Row | None, defaults: dict[str, Any]) -> Row | None:
    if row is None:
        return None
    return {**{c: v for c, v in defaults.items() if c not in row}, **row}


def _unique_conflicts(repo: Repo, target: TableState, write: ColumnWrite) -> list[Conflict]:
    """`@unique` over the merged column (the target's rows, with the written values)."""
    if not any(write.prop in cols for cols in write.type.uniques):
        return []
    try:
        check_unique(repo.tables.open(target), write)
    except UniqueViolationError as exc:
        return [Conflict(UNIQUE_VIOLATION, write.table, "", str(exc), (write.prop,))]
    return []
