"""Run a Cypher query on one pinned snapshot: parse, check and plan it, then execute the
plan with `read.sql.run_sql` (the same sandbox, row and byte caps and timeout as `g.sql`)
on a pooled locked-down connection (the SQL is ours: read.sql_pool), marked `generated`
(one SELECT by construction: not parsed a second time to check it, as user SQL is).
Only the tables the plan reads are registered; parameters are bound as prepared
parameters (`Plan.params`).

A query of query.traverse's shape (an anchored traversal) runs on the cached adjacency
instead, without DuckDB (`CSR_TRAVERSAL`), and so do shortestPath searches between
selected nodes (pathsearch.CsrPathSearcher). A `CALL` of a graph algorithm runs first
(query/calls.py) and its Arrow answer is registered for the SQL.

The time limit runs from the first step: parsing, planning and every prefetch count, and
the deadline is checked between prefetch lookups and between traversal levels (a Lance
lookup or an adjacency build itself cannot be interrupted: the server runs whole queries
in worker processes, graphlake.isolation, which are killed at the deadline). The
generated SQL is capped at MAX_SQL_CHARS (`QueryTooLargeError`). A query planned before
(same text, schema and parameter names and types) is not parsed or planned again: its
new parameter values are bound into the cached plan (`PLANS`, query.plancache), for
the adjacency and the SQL executors alike."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import operator
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.adjacency.load import adjacency
from graphlake.errors import (
    AdjacencyTooLargeError,
    CypherParameterError,
    CypherSyntaxError,
    QueryTimeoutError,
    QueryTooLargeError,
)
from graphlake.query import sqlgen, traverse
from graphlake.query.calls import run_calls
from graphlake.query.explained import LOGICAL_PLAN_KEY
from graphlake.query.parser import parse_query
from graphlake.query.pathsearch import CsrPathSearcher, PathSearcher
from graphlake.query.plancache import PlanCache
from graphlake.query.planner import Plan, plan_query
from graphlake.read.sql import SqlLimits, run_sql, timeout_message

PREFETCH_MAX_IDS = 50_000  # a larger frontier reads the whole table (a hash join does)
MAX_SQL_CHARS = 1_000_000  # the SQL one Cypher query compiles to
# Anchored traversals of query.traverse's shape run on the adjacency (no DuckDB); False:
# every query runs as SQL (tests compare the two executors with it).
CSR_TRAVERSAL = True

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


# Plans of query texts run before (query.plancache): a repeated text, with the same
# schema and parameter types, is neither parsed nor planned again.
PLANS = PlanCache()


def _check_text(text: str, limits: SqlLimits) -> None:
    if limits.max_query_chars is not None and len(text) > limits.max_query_chars:
        raise QueryTooLargeError(
            f"the query is longer than {limits.max_query_chars} "
            f"characters (the limit sql_max_query_chars)"
        )


def compile_query(
    snapshot: Snapshot, text: str, params: Mapping[str, object] | None, limits: SqlLimits
) -> Plan:
    """The plan of `text`: from the plan cache when the text ran before, else compiled."""
    _check_text(text, limits)
    if params is not None and not isinstance(params, Mapping):
        raise CypherParameterError(
            f"params must be a mapping of names to values, got a {type(params).__name__}"
        )
    return PLANS.plan(
        text,
        snapshot.commit.schema_id,
        params or {},
        lambda: _compile(snapshot, text, params),
    )


def _compile(snapshot: Snapshot, text: str, params: Mapping[str, object] | None) -> Plan:
    try:
        plan = plan_query(parse_query(text), snapshot.schema, dict(params or {}))
    except RecursionError:  # the parse tree and the planner recurse on nesting
        raise CypherSyntaxError("the query is nested too deeply") from None
    size = len(plan.sql) + sum(len(s.sql) for s in plan.seeds)
    if size > MAX_SQL_CHARS:
        raise QueryTooLargeError(
            f"the query compiles to {size} characters of SQL, more than "
            f"{MAX_SQL_CHARS}; simplify it (fewer patterns, "
            f"expressions or hops)"
        )
    return plan


def run_query(
    snapshot: Snapshot,
    text: str,
    params: Mapping[str, object] | None = None,
    *,
    max_rows: int | None = None,
    timeout_s: float | None = None,
    limits: SqlLimits | None = None,
    explain: bool = False,
) -> pa.Table:
    """The rows of one read query; with `explain`, its plan: one row per step with what it
    does, how many rows it produced, how long it took (cumulative) and its SQL."""
    started = time.monotonic()
    limits = limits or SqlLimits()
    timeout_s = timeout_s if timeout_s is not None else limits.timeout_s
    clock = _Clock(started, timeout_s, limits)
    try:
        return _run(snapshot, text, params, max_rows, limits, explain, clock)
    except QueryTimeoutError:  # a step got the time left: report the query's limit
        raise QueryTimeoutError(timeout_message(timeout_s, limits)) from None


def _run(
    snapshot: Snapshot,
    text: str,
    params: Mapping[str, object] | None,
    max_rows: int | None,
    limits: SqlLimits,
    explain: bool,
    clock: _Clock,
) -> pa.Table:
    plan = compile_query(snapshot, text, params, limits)
    found = plan.traversal
    if found is not None and CSR_TRAVERSAL:
        try:
            table, steps = traverse.run(
                snapshot,
                found,
                max_rows=max_rows if max_rows is not None else limits.max_rows,
                max_bytes=_max_bytes(limits),
                check=clock.check,
            )
        except (traverse.TooManyPaths, AdjacencyTooLargeError):  # too wide for arrays of
            # paths, or an adjacency past the memory limit: the SQL plan answers instead
            return _run_sql(snapshot, text, params, max_rows, limits, explain, clock, plan)
        if explain:
            return _with_logical(_csr_steps(steps), plan)
        return table
    if plan.csr_match is not None and CSR_TRAVERSAL:
        try:  # the first MATCH on the adjacency, the rest of the plan over its rows
            bindings, steps = traverse.bind(
                snapshot, plan.csr_match, max_bytes=_max_bytes(limits), check=clock.check
            )
        except (traverse.TooManyPaths, AdjacencyTooLargeError):
            pass  # as above: the whole SQL plan answers
        else:
            bound = (steps, {traverse.BINDINGS: bindings})
            plan = plan.on_bindings()
            return _run_sql(snapshot, text, params, max_rows, limits, explain, clock, plan, bound)
    return _run_sql(snapshot, text, params, max_rows, limits, explain, clock, plan)


def _csr_steps(steps: list[traverse.RunStep]) -> pa.Table:
    return pa.table(
        {
            "step": [f"t{i}" for i in range(len(steps))],
            "operation": [s.operation for s in steps],
            "rows": [s.rows for s in steps],
            "seconds": [s.seconds for s in steps],
            "sql": [s.detail for s in steps],
            "executor": ["csr"] * len(steps),
        }
    )


def _run_sql(
    snapshot: Snapshot,
    text: str,
    params: Mapping[str, object] | None,
    max_rows: int | None,
    limits: SqlLimits,
    explain: bool,
    clock: _Clock,
    plan: Plan,
    bound: tuple[list[traverse.RunStep], dict[str, object]] | None = None,
) -> pa.Table:
    """`bound`: the steps run on the adjacency and the tables they registered (a first
    MATCH's bindings, `Plan.csr_match`)."""
    # The limit on text length applies to the Cypher, not to the SQL generated from it.
    sql_limits = dataclasses.replace(limits, max_query_chars=None)
    clock.check()
    extra, frontiers = _prefetched(snapshot, plan, clock, sql_limits)
    extra.update(run_calls(snapshot, plan.calls, clock.check, limits))
    plan = _searched(snapshot, plan, frontiers, extra, clock)
    if bound is not None:
        extra.update(bound[1])
    if explain:
        sql_steps = _explain(snapshot, plan, clock, sql_limits, extra)
        report = sql_steps if bound is None else pa.concat_tables([_csr_steps(bound[0]), sql_steps])
        return _with_logical(report, plan)
    table = run_sql(
        snapshot,
        plan.sql,
        max_rows=max_rows,
        timeout_s=clock.left(),
        limits=sql_limits,
        tables=plan.tables,
        extra=extra,
        pooled=True,
        generated=True,
        params=plan.params_of(plan.sql),
    )
    return _integers(table.rename_columns(list(plan.columns)))


def _with_logical(report: pa.Table, plan: Plan) -> pa.Table:
    """The explain report with the logical plan (query.logical: one operator a line,
    top-down, each with its executor) in its schema metadata, `LOGICAL_PLAN_KEY`."""
    if plan.logical is None:
        return report
    return report.replace_schema_metadata({LOGICAL_PLAN_KEY: plan.logical.text().encode()})


def _max_bytes(limits: SqlLimits) -> int | None:
    """What an adjacency a query must build may not pass: the adjacency's own limit,
    else the query's memory limit."""
    mb = limits.adjacency_memory_mb or limits.memory_limit_mb
    return None if mb is None else mb * 2**20


class _Clock:
    """The query's deadline, from its first step on."""

    def __init__(self, started: float, timeout_s: float | None, limits: SqlLimits):
        self.started, self.timeout_s, self.limits = started, timeout_s, limits
        self.deadline = None if timeout_s is None else started + timeout_s

    def left(self) -> float | None:
        """The time left (at least a millisecond, so the next step reports the timeout)."""
        self.check()
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.001)

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise QueryTimeoutError(timeout_message(self.timeout_s, self.limits))


def _integers(table: pa.Table) -> pa.Table:
    """DuckDB sums integers to a 128-bit integer (an Arrow decimal): Cypher's are 64-bit."""
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type) and field.type.scale == 0:
            with contextlib.suppress(pa.ArrowInvalid):  # beyond 64 bits: keep the decimal
                table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return table


def _prefetched(
    snapshot: Snapshot, plan: Plan, clock: _Clock, limits: SqlLimits
) -> tuple[dict[str, object], dict[str, pa.Array | None]]:
    """Anchored traversals: the rows each hop can reach, read through Lance's indexes by
    the frontier of node ids (see patterns.Prefetch), registered in place of whole
    tables. A frontier above PREFETCH_MAX_IDS registers the whole table instead."""

    frontiers: dict[str, pa.Array | None] = {}
    for seed in plan.seeds:
        clock.check()
        if seed.lookup is not None:  # constants only: a Lance scan (by index on id)
            table, pairs = seed.lookup
            where = functools.reduce(
                operator.and_, (pc.field(c) == plan.argument(v) for c, v in pairs)
            )
            ids = snapshot.dataset(table).to_table(columns=["id"], filter=where).column("id")
        else:
            ids = run_sql(
                snapshot,
                seed.sql,
                timeout_s=clock.left(),
                limits=limits,
                tables=seed.tables,
                pooled=True,
                generated=True,
                params=plan.params_of(seed.sql),
            ).column("node")
        frontiers[seed.frontier] = pc.unique(ids.combine_chunks())
    extra: dict[str, object] = {}
    for p in plan.prefetch:
        clock.check()
        ds = snapshot.dataset(p.table)
        ids = frontiers.get(p.frontier)
        if ids is None or len(ids) > PREFETCH_MAX_IDS:
            extra[p.name] = ds
            if p.next_frontier is not None:
                frontiers[p.next_frontier] = None
            continue
        rows = ds.to_table(columns=list(p.columns), filter=pc.field(p.key).isin(ids))
        extra[p.name] = rows
        if p.next_frontier is not None and p.next_key is not None:
            frontiers[p.next_frontier] = pc.unique(rows.column(p.next_key).combine_chunks())
    return extra, frontiers


SEARCH_MAX_STARTS = 100  # more start nodes: DuckDB's breadth-first CTE instead
SEARCH_MAX_PAIRS = 100  # up to this many (start, target) pairs: a search from both ends


def _searched(
    snapshot: Snapshot, plan: Plan, frontiers: dict, extra: dict[str, object], clock: _Clock
) -> Plan:
    """shortestPath searches answered frontier by frontier through Lance's indexes (see
    patterns.PathSearch and query.pathsearch); a search that outgrows the caps is left to
    the SQL CTE."""
    for search in plan.searches:
        starts, targets = frontiers.get(search.starts), frontiers.get(search.targets)
        if (
            starts is None
            or targets is None
            or len(starts) > SEARCH_MAX_STARTS
            or search.labels[0] != search.labels[1]
        ):  # one node type: ids cannot mix
            continue
        rest = (
            search.table,
            search.labels[0],
            search.direction,
            search.max_depth,
            PREFETCH_MAX_IDS,
            clock.deadline,
            timeout_message(clock.timeout_s, clock.limits),
        )
        searcher: PathSearcher | CsrPathSearcher | None = None
        by = "csr"
        if CSR_TRAVERSAL:
            with contextlib.suppress(AdjacencyTooLargeError):  # past the memory limit:
                csr = adjacency(snapshot, search.table, max_bytes=_max_bytes(clock.limits))
                searcher = CsrPathSearcher(csr, *rest)  # the search by Lance lookups
        if searcher is None:
            searcher, by = PathSearcher(snapshot.dataset(search.table), *rest), "lance"
        rows = searcher.rows(starts.to_pylist(), targets.to_pylist(), SEARCH_MAX_PAIRS)
        if rows is None:
            continue
        name = f"{search.cte}_found"
        extra[name] = rows
        plan = plan.with_step_sql(search.cte, sqlgen.found(name), by)
    return plan


def _explain(
    snapshot: Snapshot, plan: Plan, clock: _Clock, limits: SqlLimits, extra: dict[str, object]
) -> pa.Table:
    rows: dict[str, list] = {
        "step": [],
        "operation": [],
        "rows": [],
        "seconds": [],
        "sql": [],
        "executor": [],
    }
    for i, step in enumerate(plan.steps):
        started = time.perf_counter()
        sql = plan.sql_until(i)
        counted = run_sql(
            snapshot,
            sql,
            timeout_s=clock.left(),
            limits=limits,
            tables=plan.tables,
            extra=extra,
            pooled=True,
            generated=True,
            params=plan.params_of(sql),
        )
        rows["step"].append(step.name)
        rows["operation"].append(step.what)
        rows["rows"].append(counted.column(0)[0].as_py())
        rows["seconds"].append(round(time.perf_counter() - started, 6))
        rows["sql"].append(step.sql)
        rows["executor"].append(step.executor)
    return pa.table(rows)
