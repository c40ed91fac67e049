"""Cypher's `CALL`: a graph algorithm (graphlake.algo) as the rows of one step.

    CALL pagerank('Knows', {damping: 0.9}) YIELD node, rank WHERE rank > 0.01
    RETURN node.name, rank ORDER BY rank DESC LIMIT 10

A procedure is an algorithm by any name `graphlake.algo.run.lookup` knows (`pagerank`,
`page_rank`, `wcc`, `louvain`, `shortest_paths`, ...); its arguments are the edge type
and, optionally, a map of the algorithm's parameters, each a literal or a `$parameter`.
It yields `node` (the node, as MATCH binds one: `node.name` reads its property) and the
algorithm's value column (`rank`, `component`, `community`, `core`, `distance`). The
binder checks all of it before anything runs (query.procedures: an unknown procedure, a
parameter out of range or a column it does not yield is a `CypherProcedureError` naming
what there is) and `compile_call` makes the step; the executor runs each call on the
query's snapshot first (`run_calls`, within the query's time and memory limits) and
registers its Arrow answer under `AlgoCall.name`, so the step joins it to the node
table(s) and everything after YIELD runs in DuckDB like any other step (its SQL written
by query.sqlgen's `procedures`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.algo import params as algo_params
from graphlake.algo.run import run
from graphlake.query import sqlgen, syntax
from graphlake.query.checker import Binding
from graphlake.query.patterns import FreshNames, PatternCompiler
from graphlake.query.procedures import NODE_COLUMN, ResolvedCall, algorithm, yielded
from graphlake.query.usage import props_of

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot
    from graphlake.read.sql import SqlLimits


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
    algo = algorithm(last)
    items = tuple(
        syntax.Item(syntax.Var(last.pos, alias), alias, True) for _, alias in yielded(last, algo)
    )
    back = syntax.Projection(last.pos, True, False, False, items, (), None, None, None)
    return syntax.Query((*query.clauses, back))


def compile_call(
    resolved: ResolvedCall,
    scope: Mapping[str, Binding],
    prev: str,
    patterns: PatternCompiler,
    names: FreshNames,
    condition: str | None,
) -> CompiledCall:
    """The step of a call the binder checked (`resolved`) on top of the rows of step
    `prev`, `scope` the variables so far; `condition` the SQL of its WHERE."""
    yields = tuple((column, alias) for column, alias, _ in resolved.yields)
    new = {alias: b for _, alias, b in resolved.yields}
    algo, edge_type = resolved.algo, resolved.edge.name
    relation = names.fresh("call")
    nodes, by_label = None, False
    for column, alias in yields:
        if column == NODE_COLUMN:
            node_types = new[alias].types
            nodes = patterns.node_source(node_types, props_of(patterns.usage, alias))
            by_label = len(node_types) > 1
    columns = [(None if col == NODE_COLUMN else col, alias) for col, alias in yields]
    sql = sqlgen.call(prev, scope, relation, columns, nodes, by_label, condition)
    what = (
        f"CALL {algo.name}({edge_type!r}) YIELD "
        + ", ".join(a if a == col else f"{col} AS {a}" for col, a in yields)
        + " (graph algorithm, igraph)"
    )
    call = AlgoCall(relation, algo.name, edge_type, dict(resolved.options))
    return CompiledCall(call, what, sql, new)


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
