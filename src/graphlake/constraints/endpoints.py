"""Referential integrity: every edge's src and dst exist; no deleted node keeps edges."""

from __future__ import annotations

from collections.abc import Callable

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.violation import Violation
from graphlake.schema.model import EdgeType, Schema
from graphlake.storage.lookup import rows_where_in
from graphlake.write.plan import TablePlan

DatasetFor = Callable[[str], lance.LanceDataset]


def existing_nodes(
    node_type: str, keys: set[str], plans: dict[str, TablePlan], dataset: DatasetFor
) -> set[str]:
    """Which of `keys` are nodes of `node_type` once `plans` apply to the head."""
    plan = plans.get(node_type)
    present: set[str] = set()
    rest = set(keys)
    if plan is not None:
        written = set(plan.written.column("id").to_pylist())
        present |= rest & written
        rest -= written
        rest -= plan.deleted_ids
        if plan.delete_all:
            rest = set()
    if rest:
        head = rows_where_in(dataset(node_type), "id", sorted(rest), ["id"])
        present |= set(head.column("id").to_pylist())
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
        keys = set(pc.unique(written.column(column)).to_pylist())
        absent = keys - existing_nodes(node_type, keys, plans, dataset)
        if not absent:
            continue
        mask = pc.is_in(written.column(column), value_set=pa.array(sorted(absent)))
        for row in written.filter(mask).select(["id", "src", "dst"]).to_pylist():
            out.append(Violation(
                "endpoint", t.name, row["id"],
                f"edge {row['src']!r}->{row['dst']!r} points at {node_type} "
                f"{row[column]!r}, which does not exist", (column,),
                f"{column} {node_type} {row[column]!r}",
            ))
    return out


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
            out.append(Violation(
                "dangling", et.name, r["id"],
                f"edge {r['src']!r}->{r['dst']!r} still points at deleted {plan.name} "
                f"{r[column]!r}", (column,), f"{r['src']!r}->{r['dst']!r}",
            ))
    return out
