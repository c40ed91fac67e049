"""Referential integrity: every edge's src and dst exist; no deleted node keeps edges."""

from __future__ import annotations

from collections.abc import Callable

import lance
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.violation import Violation
from graphlake.schema.model import EdgeType, Schema
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.plan import TablePlan

DatasetFor = Callable[[str], lance.LanceDataset]


def existing_nodes(
    node_type: str, keys: pa.Array, plans: dict[str, TablePlan], dataset: DatasetFor
) -> pa.BooleanArray:
    """Which of `keys` (distinct, no nulls) are nodes of `node_type` once `plans` apply
    to the head, as a mask over `keys`. Columnar: an edge load of a million rows checks
    a million endpoints as Arrow hash lookups, not Python sets."""
    plan = plans.get(node_type)
    present = pc.is_in(keys, value_set=plan.written.column("id")) if plan else _false(keys)
    if plan is not None and plan.delete_all:
        return present
    rest = pc.invert(present)  # neither written nor (below) deleted by the plan
    if plan is not None and plan.deleted_old.num_rows:
        rest = pc.and_(rest, pc.invert(pc.is_in(keys, value_set=plan.deleted_old["id"])))
    asked = keys.filter(rest)
    if len(asked):
        head = rows_where_in(dataset(node_type), "id", asked, ["id"], distinct=True)
        present = pc.or_(present, pc.and_(rest, pc.is_in(keys, value_set=head["id"])))
    return present


def missing_endpoints(
    plan: TablePlan, plans: dict[str, TablePlan], dataset: DatasetFor
) -> list[Violation]:
    """Edges `plan` writes whose src or dst node does not exist afterwards."""
    t = plan.type
    assert isinstance(t, EdgeType)
    written = plan.written
    if written.num_rows == 0:
        return []
    out: list[Violation] = []
    for column, node_type in (("src", t.src), ("dst", t.dst)):
        keys = pc.unique(written.column(column)).drop_null()
        absent = keys.filter(pc.invert(existing_nodes(node_type, keys, plans, dataset)))
        if not len(absent):
            continue
        mask = pc.is_in(written.column(column), value_set=absent)
        for row in written.filter(mask).select(["id", "src", "dst"]).to_pylist():
            out.append(
                Violation(
                    "endpoint",
                    t.name,
                    row["id"],
                    f"edge {row['src']!r}->{row['dst']!r} points at {node_type} "
                    f"{row[column]!r}, which does not exist",
                    (column,),
                    f"{column} {node_type} {row[column]!r}",
                )
            )
    return out


def _false(keys: pa.Array) -> pa.BooleanArray:
    return pa.array(np.zeros(len(keys), dtype=bool))


def edges_touching(
    t: EdgeType, node_type: str, keys: list[str], ds: lance.LanceDataset
) -> pa.Table:
    """Head edges of `t` whose src or dst (of `node_type`) is one of `keys`, once each."""
    parts = [
        rows_where_in(ds, column, keys)
        for column, end in (("src", t.src), ("dst", t.dst))
        if end == node_type and keys
    ]
    if not parts:
        return ds.schema.empty_table()
    table = pa.concat_tables(parts)
    seen: set[str] = set()
    first = []
    for i, k in enumerate(table.column("id").to_pylist()):
        if k not in seen:
            seen.add(k)
            first.append(i)
    return table.take(pa.array(first, type=pa.int64()))


def dangling_edges(
    schema: Schema, plan: TablePlan, plans: dict[str, TablePlan], dataset: DatasetFor
) -> list[Violation]:
    """Head edges left pointing at nodes that `plan` deletes."""
    deleted = sorted(plan.deleted_ids)
    if not deleted:
        return []
    out: list[Violation] = []
    for et in schema.edges_touching(plan.name):
        edge_plan = plans.get(et.name)
        if edge_plan is not None and edge_plan.delete_all:
            continue
        head = edges_touching(et, plan.name, deleted, dataset(et.name))
        gone = set(edge_plan.removed_ids) if edge_plan else set()
        for r in head.to_pylist():
            if r["id"] in gone:
                continue
            column = "src" if et.src == plan.name and r["src"] in plan.deleted_ids else "dst"
            out.append(
                Violation(
                    "dangling",
                    et.name,
                    r["id"],
                    f"edge {r['src']!r}->{r['dst']!r} still points at deleted {plan.name} "
                    f"{r[column]!r}",
                    (column,),
                    f"{r['src']!r}->{r['dst']!r}",
                )
            )
    return out
