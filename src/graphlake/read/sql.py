"""Read-only SQL through DuckDB over one pinned snapshot.

Each table is registered under its type name; external access (files, network,
`ATTACH`, `COPY`, extension loading) is disabled and the configuration locked before the
query runs, and only SELECT-like statements are accepted.
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

from graphlake.errors import QueryError
from graphlake.read.snapshot import Snapshot

_ALLOWED = {"SELECT", "EXPLAIN"}


def run_sql(
    snapshot: Snapshot,
    query: str,
    *,
    max_rows: int | None = None,
    timeout_s: float | None = None,
) -> pa.Table:
    con = duckdb.connect(":memory:")
    try:
        statements = _parse(con, query)
        for name, ds in snapshot.datasets().items():
            con.register(name, ds)
        con.execute("SET enable_external_access = false")
        con.execute("SET autoinstall_known_extensions = false")
        con.execute("SET autoload_known_extensions = false")
        con.execute("SET lock_configuration = true")
        timer = _interrupt_after(con, timeout_s)
        try:
            rel = con.sql(statements[0].query)
            table = rel.to_arrow_table() if max_rows is None else _fetch_limited(rel, max_rows)
        finally:
            if timer is not None:
                timer.cancel()
        return table
    except duckdb.InterruptException:
        raise QueryError(f"query timed out after {timeout_s} s") from None
    except duckdb.Error as exc:
        raise QueryError(f"SQL error: {exc}") from None
    finally:
        con.close()


def _parse(con: duckdb.DuckDBPyConnection, query: str) -> list:
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise QueryError(f"SQL error: {exc}") from None
    if len(statements) != 1:
        raise QueryError(f"expected exactly one SQL statement, got {len(statements)}")
    kind = statements[0].type.name
    if kind not in _ALLOWED:
        raise QueryError(f"only read-only queries are allowed (got a {kind} statement)")
    return statements


def _fetch_limited(rel: duckdb.DuckDBPyRelation, max_rows: int) -> pa.Table:
    reader = rel.to_arrow_reader(min(max_rows + 1, 100_000))
    batches, n = [], 0
    for batch in reader:
        batches.append(batch)
        n += batch.num_rows
        if n > max_rows:
            break
    table = pa.Table.from_batches(batches, schema=reader.schema)
    if table.num_rows > max_rows:
        raise QueryError(f"query returned more than {max_rows} rows; add a LIMIT")
    return table


def _interrupt_after(con: duckdb.DuckDBPyConnection, timeout_s: float | None):
    if timeout_s is None:
        return None
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    return timer
