"""Cypher's `CALL`: a graph algorithm (graphlake.algo) as the rows of one step.

    CALL pagerank('Knows', {damping: 0.9}) YIELD node, rank WHERE rank > 0.01
    RETURN node.name, rank ORDER BY rank DESC LIMIT 10

A procedure is an algorithm by any name `graphlake.algo.run.lookup` knows (`pagerank`,
`page_rank`, `wcc`, `louvain`, `shortest_paths`, ...); its arguments are the edge type
and, optionally, a map of the algorithm's parameters, each a literal or a `$parameter`.
It yields `node` (the node, as MATCH binds one: `node.name` reads its property) and the
algorithm's value column (`rank`, `component`, `community`, `core`, `distance`). The
planner checks all of it before anything runs (`compile_call`: an unknown procedure, a
parameter out of range or a column it does not yield is a `CypherProcedureError` naming
what there is); the executor runs each call on the query's snapshot first (`run_calls`,
within the query's time and memory limits) and registers its Arrow answer under
`AlgoCall.name`, so the step joins it to the node table(s) and everything after YIELD
runs in DuckDB like any other step (its SQL written by query.sqlgen's `procedures`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.algo import NAMES
from graphlake.algo import params as algo_params
from graphlake.algo.run import Algorithm, check_options, lookup, run
from graphlake.errors import AlgorithmError, CypherError, CypherNameError, CypherProcedureError
from graphlake.query import sqlgen, syntax
from graphlake.query.checker import FLOAT, INT, NODE, Binding, Checker, closest, suggest
from graphlake.query.expr import ExprCompiler
from graphlake.query.patterns import FreshNames, PatternCompiler
from graphlake.query.usage import props_of

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot
    from graphlake.read.sql import SqlLimits

NODE_COLUMN = "node"
_FLOAT_COLUMNS = ("rank", "distance")  # every other value column is an integer


@dataclass(frozen=True)
class AlgoCall:
    """One algorithm run the executor does before the SQL."""

    name: str  # the relation its answer is registered as
    algorithm: str  # graphlake.algo's name for it
    edge_type: str
    options: Mapping[str, Any]


@dataclass(frozen=True)
class CompiledCall:
    call: AlgoCall
    what: str  # one line for explain
    sql: str  # the step: the rows before it times the algorithm's rows
    new: dict[str, Binding]  # the variables it yields


def completed(query: syntax.Query) -> syntax.Query:
    """A query ending in CALL (a standalone call) returns every column it yields."""
    last = query.clauses[-1] if query.clauses else None
    if not isinstance(last, syntax.Call):
        return query
    algo = _algorithm(last)
    items = tuple(
        syntax.Item(syntax.Var(last.pos, alias), alias, True) for _, alias in _yields(last, algo)
    )
    back = syntax.Projection(last.pos, True, False, False, items, (), None, None, None)
    return syntax.Query((*query.clauses, back))


def compile_call(
    c: syntax.Call,
    checker: Checker,
    scope: dict[str, Binding],
    prev: str,
    patterns: PatternCompiler,
    names: FreshNames,
    subquery: Callable[[syntax.Expr, ExprCompiler], str],
) -> CompiledCall:
    """The step of `c` on top of the rows of step `prev`, `scope` the variables so far."""
    algo = _algorithm(c)
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

    yields = _yields(c, algo)
    new: dict[str, Binding] = {}
    for column, alias in yields:
        if alias in scope or alias in new:
            raise CypherError(f"variable {alias!r} is already defined", *c.pos)
        if column == NODE_COLUMN:
            types = tuple(dict.fromkeys((edge.src, edge.dst)))
            new[alias] = Binding(NODE, types)
        else:
            new[alias] = Binding(FLOAT if column in _FLOAT_COLUMNS else INT)

    relation = names.fresh("call")
    nodes, by_label = None, False
    for column, alias in yields:
        if column == NODE_COLUMN:
            node_types = new[alias].types
            nodes = patterns.node_source(node_types, props_of(patterns.usage, alias))
            by_label = len(node_types) > 1
    cond = None
    if c.where is not None:
        cond = ExprCompiler(checker, {**scope, **new}, subquery).condition(c.where)
    columns = [(None if col == NODE_COLUMN else col, alias) for col, alias in yields]
    sql = sqlgen.call(prev, scope, relation, columns, nodes, by_label, cond)
    what = (
        f"CALL {algo.name}({edge_type!r}) YIELD "
        + ", ".join(a if a == col else f"{col} AS {a}" for col, a in yields)
        + " (graph algorithm, igraph)"
    )
    return CompiledCall(AlgoCall(relation, algo.name, edge_type, dict(options)), what, sql, new)


def run_calls(
    snapshot: Snapshot,
    calls: tuple[AlgoCall, ...],
    check: Callable[[], None],
    limits: SqlLimits,
) -> dict[str, pa.Table]:
    """Each call's answer by its relation name. `check` raises past the query's deadline
    (before and after each run: an algorithm itself cannot be interrupted in-process; the
    server's worker is killed at the deadline); `limits.algo_memory_mb` is each run's
    `max_memory_mb` (the server's `query_memory_mb`, as for POST /algo; not DuckDB's
    `memory_limit_mb`), so a run estimated past it is refused before it starts
    (`AlgorithmMemoryError`), never answered in part; `limits.algo_threads` its
    `max_threads`."""
    memory_mb = limits.algo_memory_mb
    limit = algo_params.MAX_MEMORY_MB if memory_mb is None else memory_mb
    answers: dict[str, pa.Table] = {}
    for call in calls:
        check()
        answers[call.name] = run(
            snapshot,
            call.algorithm,
            call.edge_type,
            max_memory_mb=limit,
            max_threads=limits.algo_threads,
            **call.options,
        )
        check()
    return answers


# --- helpers


def _algorithm(c: syntax.Call) -> Algorithm:
    try:
        return lookup(c.name)
    except AlgorithmError as exc:
        message = str(exc).replace("unknown algorithm", "unknown procedure", 1)
        close = closest(c.name.lower(), NAMES)
        if close is not None:
            message = message.replace(" (known:", f"; did you mean {close!r}? (known:", 1)
        raise CypherProcedureError(message, *c.pos) from None


def _yields(c: syntax.Call, algo: Algorithm) -> tuple[tuple[str, str], ...]:
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
