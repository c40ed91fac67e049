"""A `CALL` resolved against graphlake.algo: the procedure, its arguments and what it
yields, checked before anything runs.

`resolve` raises every error a call can have (an unknown procedure, arguments that are
not constants, an unknown edge type, a parameter out of range, a column it does not
yield: `CypherProcedureError` or `CypherNameError`, naming what there is); the binder
(query.binder) calls it to learn the variables a call adds, and query.calls turns the
resolved call into its step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphlake.algo import NAMES
from graphlake.algo.run import Algorithm, check_options, lookup
from graphlake.errors import AlgorithmError, CypherNameError, CypherProcedureError
from graphlake.query import syntax
from graphlake.query.checker import FLOAT, INT, NODE, Binding, Checker, closest, suggest
from graphlake.schema.model import EdgeType

NODE_COLUMN = "node"
_FLOAT_COLUMNS = ("rank", "distance")  # every other value column is an integer


@dataclass(frozen=True)
class ResolvedCall:
    """A checked `CALL`: the algorithm, its edge type and options, and each yielded
    column with its alias and what the alias holds."""

    algo: Algorithm
    edge: EdgeType
    options: Mapping[str, Any]
    yields: tuple[tuple[str, str, Binding], ...]  # (column, alias, binding)


def resolve(c: syntax.Call, checker: Checker) -> ResolvedCall:
    """`c` checked against graphlake.algo and the schema (the errors in the module
    docstring); reads its `$parameter` arguments through `checker.param` (the plan
    depends on their values)."""
    algo = algorithm(c)
    if not c.args or len(c.args) > 2:
        raise CypherProcedureError(
            f"{algo.name} takes an edge type and optionally a map of parameters, e.g. "
            f"CALL {algo.name}('Knows'{_example(algo)}); got {len(c.args)} argument(s)",
            *c.pos,
        )
    edge_type = _constant(c.args[0], checker)
    if not isinstance(edge_type, str):
        raise CypherProcedureError(
            f"the first argument of {algo.name} is an edge type's name, not {edge_type!r}",
            *c.args[0].pos,
        )
    edge = checker.schema.edges.get(edge_type)
    if edge is None:
        hint = (
            f" ({edge_type!r} is a node label)"
            if edge_type in checker.schema.nodes
            else suggest(edge_type, checker.schema.edges)
        )
        raise CypherNameError(f"unknown relationship type {edge_type!r}{hint}", *c.args[0].pos)
    options = _constant(c.args[1], checker) if len(c.args) == 2 else {}
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise CypherProcedureError(
            f"the second argument of {algo.name} is a map of parameters, e.g. "
            f"{_example(algo)[2:] or '{}'}; got {options!r}",
            *c.args[1].pos,
        )
    try:
        check_options(algo, options)
    except AlgorithmError as exc:
        raise CypherProcedureError(str(exc), *c.args[-1].pos) from None
    yields = []
    for column, alias in yielded(c, algo):
        if column == NODE_COLUMN:
            b = Binding(NODE, tuple(dict.fromkeys((edge.src, edge.dst))))
        else:
            b = Binding(FLOAT if column in _FLOAT_COLUMNS else INT)
        yields.append((column, alias, b))
    return ResolvedCall(algo, edge, dict(options), tuple(yields))


def algorithm(c: syntax.Call) -> Algorithm:
    try:
        return lookup(c.name)
    except AlgorithmError as exc:
        message = str(exc).replace("unknown algorithm", "unknown procedure", 1)
        close = closest(c.name.lower(), NAMES)
        if close is not None:
            message = message.replace(" (known:", f"; did you mean {close!r}? (known:", 1)
        raise CypherProcedureError(message, *c.pos) from None


def yielded(c: syntax.Call, algo: Algorithm) -> tuple[tuple[str, str], ...]:
    """(column, alias) of each column `c` yields (every column without YIELD)."""
    have = (NODE_COLUMN, algo.column)
    if c.yields is None:
        return tuple((col, col) for col in have)
    for column, _ in c.yields:
        if column not in have:
            raise CypherProcedureError(
                f"{algo.name} yields {have[0]} and {have[1]}, not {column!r}", *c.pos
            )
    return c.yields


def _constant(e: syntax.Expr, checker: Checker) -> Any:
    """The value of an argument: a literal, a `$parameter`, a signed number, or a map or
    list of these (an algorithm runs before any row exists)."""
    if isinstance(e, syntax.Lit):
        return e.value
    if isinstance(e, syntax.Param):
        return checker.param(e)
    if isinstance(e, syntax.Unary) and e.op in ("-", "+"):
        value = _constant(e.operand, checker)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if e.op == "-" else value
    if isinstance(e, syntax.MapLit):
        return {k: _constant(v, checker) for k, v in e.entries}
    if isinstance(e, syntax.ListLit):
        return [_constant(v, checker) for v in e.items]
    raise CypherProcedureError(
        "an argument of CALL is a literal or a $parameter (the algorithm runs before any row)",
        *e.pos,
    )


def _example(algo: Algorithm) -> str:
    shown = {k: v for k, v in algo.params.items() if v is not None} or {
        k: "..." for k in algo.required
    }
    if not shown:
        return ""
    return ", {" + ", ".join(f"{k}: {v!r}" for k, v in shown.items()) + "}"
