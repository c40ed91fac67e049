"""Run a Cypher query on one pinned snapshot: parse, check and plan it, then execute the
plan with `read.sql.run_sql` (the same sandbox, row and byte caps and timeout as `g.sql`).
Only the tables the plan reads are registered."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import operator
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from graphlake.errors import CypherParameterError, CypherSyntaxError, QueryError
from graphlake.query.parser import parse_query
from graphlake.query.planner import Plan, plan_query
from graphlake.read.sql import SqlLimits, run_sql

PREFETCH_MAX_IDS = 50_000  # a larger frontier reads the whole table (a hash join does)

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


def compile_query(snapshot: Snapshot, text: str, params: Mapping[str, object] | None,
                  limits: SqlLimits) -> Plan:
    if limits.max_query_chars is not None and len(text) > limits.max_query_chars:
        raise QueryError(f"the query is longer than {limits.max_query_chars} characters "
                         f"(the limit sql_max_query_chars)")
    if params is not None and not isinstance(params, Mapping):
        raise CypherParameterError(f"params must be a mapping of names to values, got a "
                                   f"{type(params).__name__}")
    try:
        return plan_query(parse_query(text), snapshot.schema, dict(params or {}))
    except RecursionError:  # the parse tree and the planner recurse on nesting
        raise CypherSyntaxError("the query is nested too deeply") from None


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
    limits = limits or SqlLimits()
    plan = compile_query(snapshot, text, params, limits)
    # The limit on text length applies to the Cypher, not to the SQL generated from it.
    sql_limits = dataclasses.replace(limits, max_query_chars=None)
    timeout_s = timeout_s if timeout_s is not None else limits.timeout_s
    started = time.monotonic()
    extra, frontiers = _prefetched(snapshot, plan, timeout_s, sql_limits)
    plan = _searched(snapshot, plan, frontiers, extra, started, timeout_s)
    if timeout_s is not None:  # the prefetch counts against the query's time
        timeout_s = max(timeout_s - (time.monotonic() - started), 0.001)
    if explain:
        return _explain(snapshot, plan, timeout_s, sql_limits, extra)
    table = run_sql(snapshot, plan.sql, max_rows=max_rows, timeout_s=timeout_s,
                    limits=sql_limits, tables=plan.tables, extra=extra)
    return _integers(table.rename_columns(list(plan.columns)))


def _integers(table: pa.Table) -> pa.Table:
    """DuckDB sums integers to a 128-bit integer (an Arrow decimal): Cypher's are 64-bit."""
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type) and field.type.scale == 0:
            with contextlib.suppress(pa.ArrowInvalid):  # beyond 64 bits: keep the decimal
                table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return table


def _prefetched(snapshot: Snapshot, plan: Plan, timeout_s: float | None,
                limits: SqlLimits) -> tuple[dict[str, object], dict[str, pa.Array | None]]:
    """Anchored traversals: the rows each hop can reach, read through Lance's indexes by
    the frontier of node ids (see patterns.Prefetch), registered in place of whole
    tables. A frontier above PREFETCH_MAX_IDS registers the whole table instead."""
    import pyarrow.compute as pc

    frontiers: dict[str, pa.Array | None] = {}
    for seed in plan.seeds:
        if seed.lookup is not None:  # constants only: a Lance scan (by index on id)
            table, pairs = seed.lookup
            where = functools.reduce(operator.and_, (pc.field(c) == v for c, v in pairs))
            ids = snapshot.dataset(table).to_table(columns=["id"], filter=where).column("id")
        else:
            ids = run_sql(snapshot, seed.sql, timeout_s=timeout_s, limits=limits,
                          tables=seed.tables).column("node")
        frontiers[seed.frontier] = pc.unique(ids.combine_chunks())
    extra: dict[str, object] = {}
    for p in plan.prefetch:
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


_WALK_SCHEMA = pa.schema([("start", pa.string()), ("node", pa.string()), ("label", pa.string()),
                          ("edges", pa.list_(pa.string())), ("nodes", pa.list_(pa.string())),
                          ("depth", pa.int32())])
SEARCH_MAX_STARTS = 100  # more start nodes: DuckDB's breadth-first CTE instead


def _searched(snapshot: Snapshot, plan: Plan, frontiers: dict, extra: dict[str, object],
              started: float, timeout_s: float | None) -> Plan:
    """shortestPath searches answered frontier by frontier through Lance's indexes (see
    patterns.PathSearch); a search that outgrows the caps is left to the SQL CTE."""
    deadline = None if timeout_s is None else started + timeout_s
    for search in plan.searches:
        starts, targets = frontiers.get(search.starts), frontiers.get(search.targets)
        if starts is None or targets is None or len(starts) > SEARCH_MAX_STARTS or \
                search.labels[0] != search.labels[1]:  # one node type: ids cannot mix
            continue
        rows = _breadth_first(snapshot.dataset(search.table), search, starts.to_pylist(),
                              set(targets.to_pylist()), deadline, timeout_s)
        if rows is None:
            continue
        name = f"{search.cte}_found"
        extra[name] = rows
        plan = plan.with_step_sql(search.cte, "SELECT start, node, label, edges, nodes, "
                                              f"depth FROM {name}")
    return plan


def _breadth_first(ds, search, starts: list[str], targets: set[str],
                   deadline: float | None, search_timeout: float | None) -> pa.Table | None:
    """One shortest path from each start to each target it reaches: (start, node, label,
    edges, nodes, depth) rows like the walk CTE's. None when a frontier outgrows
    PREFETCH_MAX_IDS."""
    import pyarrow.compute as pc

    ways = {"out": [("src", "dst")], "in": [("dst", "src")],
            "both": [("src", "dst"), ("dst", "src")]}[search.direction]
    label = search.labels[0]
    out: dict[str, list] = {f.name: [] for f in _WALK_SCHEMA}

    def emit(start: str, node: str, parent: dict, depth: int) -> None:
        nodes, edges, at = [node], [], node
        while parent[at] is not None:
            at, edge = parent[at]
            nodes.append(at)
            edges.append(edge)
        for column, value in zip(out, (start, node, label, edges[::-1], nodes[::-1], depth),
                                 strict=True):
            out[column].append(value)

    for start in starts:
        parent: dict[str, tuple[str, str] | None] = {start: None}
        if start in targets:
            emit(start, start, parent, 0)
        remaining, frontier, depth = targets - {start}, [start], 0
        while frontier and remaining and depth < search.max_depth:
            if len(frontier) > PREFETCH_MAX_IDS:
                return None
            if deadline is not None and time.monotonic() > deadline:
                raise QueryError(f"query timed out after {search_timeout} s")
            depth += 1
            reached = []
            for a, b in ways:
                hop = ds.to_table(columns=["id", a, b], filter=pc.field(a).isin(frontier))
                for eid, x, y in zip(*(hop.column(c).to_pylist() for c in ("id", a, b)),
                                     strict=True):
                    if y not in parent:
                        parent[y] = (x, f"{search.table}:{eid}")
                        reached.append(y)
                        if y in remaining:
                            remaining.discard(y)
                            emit(start, y, parent, depth)
            frontier = reached
    return pa.Table.from_pydict(out, schema=_WALK_SCHEMA)


def _explain(snapshot: Snapshot, plan: Plan, timeout_s: float | None,
             limits: SqlLimits, extra: dict[str, object]) -> pa.Table:
    rows: dict[str, list] = {"step": [], "operation": [], "rows": [], "seconds": [], "sql": []}
    for i, step in enumerate(plan.steps):
        started = time.perf_counter()
        counted = run_sql(snapshot, plan.sql_until(i), timeout_s=timeout_s, limits=limits,
                          tables=plan.tables, extra=extra)
        rows["step"].append(step.name.split("(")[0])
        rows["operation"].append(step.what)
        rows["rows"].append(counted.column(0)[0].as_py())
        rows["seconds"].append(round(time.perf_counter() - started, 6))
        rows["sql"].append(step.sql)
    return pa.table(rows)

