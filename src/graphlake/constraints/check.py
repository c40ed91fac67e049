"""Run every constraint check over a change set."""

from __future__ import annotations

from collections.abc import Iterator

from graphlake.constraints.cardinality import card_violations
from graphlake.constraints.endpoints import DatasetFor, dangling_edges, missing_endpoints
from graphlake.constraints.unique import unique_violations
from graphlake.constraints.values import value_columns, value_violations
from graphlake.constraints.violation import Violation
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.model import EdgeType, NodeType, Schema
from graphlake.storage.plan import TablePlan


def checked_columns(t: NodeType | EdgeType) -> list[str]:
    """The columns of a table's written rows that the checks below read: rows known to
    be complete (required properties present, types right) need only these to be
    checked, so an insert-only merge need not read its rows' payload (vectors, text)."""
    cols = ["id", *(["src", "dst"] if isinstance(t, EdgeType) else [])]
    cols += [c for group in t.uniques for c in group]
    cols += value_columns(t)
    return list(dict.fromkeys(cols))


def violations_by_check(
    schema: Schema,
    plans: dict[str, TablePlan],
    dataset: DatasetFor,
    deferred: frozenset[str] = frozenset(),
) -> Iterator[list[Violation]]:
    """Each check's violations (one table, one kind), lazily and in a stable order: a
    caller that stops at the first finding pays for no later check. Checks whose kind is
    in `deferred` ("endpoint", "cardinality") are not run: an ingest shard defers them to
    the merge that joins all shards, where an edge's endpoints and a node's edges from
    other shards are visible."""
    endpoints, card = "endpoint" not in deferred, "cardinality" not in deferred
    for plan in plans.values():
        yield value_violations(plan.type, plan.written)
        yield unique_violations(plan, dataset(plan.name))
    for plan in plans.values():
        if isinstance(plan.type, NodeType):
            yield dangling_edges(schema, plan, plans, dataset)
    for plan in plans.values():
        if isinstance(plan.type, EdgeType):
            if endpoints:
                yield missing_endpoints(plan, plans, dataset)
            if card:
                yield card_violations(plan, plans, dataset(plan.name))
    for et in schema.edges.values() if card else ():
        # New source nodes need their minimum of edges even when the change set does
        # not touch the edge type at all.
        src_plan = plans.get(et.src)
        if (
            et.name not in plans
            and et.card is not None
            and et.card.min > 0
            and src_plan is not None
            and src_plan.inserted.num_rows
        ):
            yield card_violations(_no_change(et), plans, dataset(et.name))


def _no_change(t: EdgeType) -> TablePlan:
    empty = arrow_schema(t).empty_table()
    return TablePlan(
        t, empty.schema, inserted=empty, updated_old=empty, updated_new=empty, deleted_old=empty
    )


def all_violations(
    schema: Schema, plans: dict[str, TablePlan], dataset: DatasetFor
) -> list[Violation]:
    """Every violation `plans` would cause against the head, in a stable order."""
    return [v for found in violations_by_check(schema, plans, dataset) for v in found]
