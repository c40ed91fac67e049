"""Run a Cypher query on one pinned snapshot: parse, check and plan it, then execute the
plan with `read.sql.run_sql` (the same sandbox, row and byte caps and timeout as `g.sql`).
Only the tables the plan reads are registered."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa

from graphlake.errors import CypherParameterError, CypherSyntaxError, QueryError
from graphlake.query.parser import parse_query
from graphlake.query.planner import Plan, plan_query
from graphlake.read.sql import SqlLimits, run_sql

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot
    from graphlake.schema.model import Schema


def compile_query(snapshot: Snapshot, text: str, params: Mapping[str, object] | None,
                  limits: SqlLimits) -> Plan:
    if limits.max_query_chars is not None and len(text) > limits.max_query_chars:
        raise QueryError(f"the query is longer than {limits.max_query_chars} characters "
                         f"(the limit sql_max_query_chars)")
    if params is not None and not isinstance(params, Mapping):
        raise CypherParameterError(f"params must be a mapping of names to values, got a "
                                   f"{type(params).__name__}")
    try:
        return plan_query(parse_query(text), _schema_of(snapshot), dict(params or {}))
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
    if explain:
        return _explain(snapshot, plan, timeout_s, sql_limits)
    table = run_sql(snapshot, plan.sql, max_rows=max_rows, timeout_s=timeout_s,
                    limits=sql_limits, tables=plan.tables)
    return _integers(table.rename_columns(list(plan.columns)))


def _integers(table: pa.Table) -> pa.Table:
    """DuckDB sums integers to a 128-bit integer (an Arrow decimal): Cypher's are 64-bit."""
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type) and field.type.scale == 0:
            with contextlib.suppress(pa.ArrowInvalid):  # beyond 64 bits: keep the decimal
                table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return table


def _explain(snapshot: Snapshot, plan: Plan, timeout_s: float | None,
             limits: SqlLimits) -> pa.Table:
    rows: dict[str, list] = {"step": [], "operation": [], "rows": [], "seconds": [], "sql": []}
    for i, step in enumerate(plan.steps):
        started = time.perf_counter()
        counted = run_sql(snapshot, plan.sql_until(i), timeout_s=timeout_s, limits=limits,
                          tables=plan.tables)
        rows["step"].append(step.name.split("(")[0])
        rows["operation"].append(step.what)
        rows["rows"].append(counted.column(0)[0].as_py())
        rows["seconds"].append(round(time.perf_counter() - started, 6))
        rows["sql"].append(step.sql)
    return pa.table(rows)


def _schema_of(snapshot: Snapshot) -> Schema:
    # A snapshot that knows its commit's own schema (per-commit schemas) wins over the
    # graph's current one.
    schema = getattr(snapshot, "schema", None)
    return schema if schema is not None and not callable(schema) else snapshot.graph.schema
