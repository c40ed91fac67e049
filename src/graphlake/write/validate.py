"""Validate a transaction's resolved plans: the shared constraint checks, raising.

The checks live in `graphlake.constraints` (merges run the same ones and report every
violation as a conflict). Each is scoped to what the transaction writes or removes:
keyed probes of the head for the touched keys, never a join of whole tables on the
common path. A write stops at the first check that finds anything and raises the typed
error of its kind.
"""

from __future__ import annotations

from graphlake.constraints.check import violations_by_check
from graphlake.constraints.endpoints import DatasetFor
from graphlake.constraints.violation import Violation
from graphlake.errors import (
    CardinalityError,
    GraphLakeError,
    MissingEndpointError,
    NodeHasEdgesError,
    UniqueViolationError,
    ValueConstraintError,
)
from graphlake.schema.model import Schema
from graphlake.storage.plan import TablePlan

__all__ = ["validate", "value_error"]

SHOWN = 5  # violations a message lists before "(and N more)"


def validate(
    schema: Schema,
    plans: dict[str, TablePlan],
    dataset: DatasetFor,
    deferred: frozenset[str] = frozenset(),
) -> None:
    # Like merges, writes count the source an updated edge moves away from under @card:
    # moving A's only edge to B under @card(1..) leaves A with none.
    for found in violations_by_check(schema, plans, dataset, deferred):
        if found:
            raise _error(schema, found)


def _error(schema: Schema, found: list[Violation]) -> GraphLakeError:
    """The typed error for one check's violations (one table, one kind)."""
    first = found[0]
    name = first.table
    if first.kind == "value":
        return value_error(name, found)
    if first.kind == "unique":
        clashes = [v.detail for v in found if v.properties == first.properties]
        return UniqueViolationError(
            f"{name}: @unique({', '.join(first.properties)}) violated: {_listed(clashes, '; ')}"
        )
    t = schema.require_edge(name)
    if first.kind == "dangling":
        node_type = t.src if first.properties == ("src",) else t.dst
        edges = [v.detail for v in found if v.table == name]
        return NodeHasEdgesError(
            f"{node_type}: cannot delete nodes that still have {name} edges "
            f"({_listed(edges, ', ')}); delete with cascade=True to remove those edges too"
        )
    if first.kind == "endpoint":
        missing = [
            d
            for column in ("src", "dst")
            for d in sorted({v.detail for v in found if v.properties == (column,)})
        ]
        return MissingEndpointError(
            f"{name}: edges point at nodes that do not exist: {_listed(missing, ', ')}"
        )
    assert first.kind == "cardinality" and t.card is not None
    bounds = f"{t.card.min}..{'' if t.card.max is None else t.card.max}"
    return CardinalityError(
        f"{name}: @card({bounds}) per {t.src} violated: {_listed([v.detail for v in found], ', ')}"
    )


def value_error(table: str, found: list[Violation]) -> ValueConstraintError:
    """`Person: 'Bob': age=200 is outside @range(0..150); ...` (table, row key, property)."""
    return ValueConstraintError(
        f"{table}: {_listed([f'{v.entity_id!r}: {v.message}' for v in found], '; ')}"
    )


def _listed(items: list[str], sep: str) -> str:
    more = f" (and {len(items) - SHOWN} more)" if len(items) > SHOWN else ""
    return sep.join(items[:SHOWN]) + more
