"""Run every constraint check over a change set."""

from __future__ import annotations

from graphlake.constraints.cardinality import card_violations
from graphlake.constraints.endpoints import DatasetFor, dangling_edges, missing_endpoints
from graphlake.constraints.unique import unique_violations
from graphlake.constraints.values import value_violations
from graphlake.constraints.violation import Violation
from graphlake.schema.model import EdgeType, NodeType, Schema
from graphlake.write.plan import TablePlan


def all_violations(
    schema: Schema, plans: dict[str, TablePlan], dataset: DatasetFor
) -> list[Violation]:
    """Every violation `plans` would cause against the head, in a stable order."""
    out: list[Violation] = []
    for plan in plans.values():
        out += value_violations(plan.type, plan.written)
        out += unique_violations(plan, dataset(plan.name))
    for plan in plans.values():
        if isinstance(plan.type, NodeType):
            out += dangling_edges(schema, plan, plans, dataset)
    for plan in plans.values():
        if isinstance(plan.type, EdgeType):
            out += missing_endpoints(plan, plans, dataset)
            out += card_violations(plan, plans, dataset(plan.name))
    return out
