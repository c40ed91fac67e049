"""A `CALL` of a graph algorithm as a step: the rows so far times the algorithm's answer,
registered as a table (`__c`: its node's `id` and `type`, and its value columns), its node
joined to the node's rows so `node.name` reads a property."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graphlake.query.sqlgen.quote import ident
from graphlake.query.sqlgen.select import UNIT, derived, named, of, select

__all__ = ["call"]


def call(
    source: str,
    variables: Iterable[str],
    relation: str,
    yields: Sequence[tuple[str | None, str]],
    nodes: str | None,
    by_label: bool,
    condition: str | None,
) -> str:
    """The step over the rows of `source` (keeping `variables`) and the answer registered
    as `relation`: `yields` are (column, variable) pairs, column None for the node, which
    is read from the FROM item `nodes` (matched by label too when `by_label`)."""
    columns, join = [], ""
    for column, alias in yields:
        if column is None:
            assert nodes is not None
            on = "__n.id = __c.id" + (" AND __n._label = __c.type" if by_label else "")
            join = f" JOIN {nodes} AS __n ON {on}"
            columns.append(named("__n", alias))
        else:
            columns.append(named(of("__c", column), alias))
    inner = select(columns, f"{ident(relation)} AS __c{join}")
    outer = [UNIT, *(of("__p", v) for v in variables), *(of("__y", a) for _, a in yields)]
    conditions = [condition] if condition is not None else []
    return select(outer, f"{source} AS __p, {derived(inner, '__y')}", conditions)
