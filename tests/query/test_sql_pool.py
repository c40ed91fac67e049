"""Cypher runs on pooled, locked-down DuckDB connections (read.sql_pool): reused across
queries, clean between them, never lent twice at once, still limited."""

from __future__ import annotations

import duckdb
import pytest

from graphlake.errors import QueryError
from graphlake.read import sql
from graphlake.read.sql_pool import ConnectionPool


class Counting:
    """duckdb.connect, counted."""

    def __init__(self) -> None:
        self.calls = 0
        self.real = duckdb.connect

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.real(*args, **kwargs)


@pytest.fixture
def pool(monkeypatch) -> ConnectionPool:
    """A private pool in place of the module's, so tests see only their own connections."""
    fresh = ConnectionPool(sql._locked_connection, size=2)
    monkeypatch.setattr(sql, "_POOL", fresh)
    return fresh


def test_cypher_queries_reuse_one_connection(social, pool, monkeypatch):
    # ORDER BY takes a DuckDB statement (plain anchored traversals run wholly on the
    # adjacency, query/traverse.py, and never take a connection).
    q = "MATCH (a:Person {name: 'p02'})-[r:Knows]->(b) RETURN count(r) AS n ORDER BY n"
    first = social.query(q).to_pylist()
    connect = Counting()
    monkeypatch.setattr(duckdb, "connect", connect)  # read.sql imports duckdb on use
    assert [social.query(q).to_pylist() for _ in range(3)] == [first] * 3
    assert connect.calls == 0
    assert pool.idle((None, None)) == 1


def test_a_returned_connection_holds_no_relations_and_stays_locked(social, pool):
    social.query("MATCH (a:Person)-[:Knows]->(b:Person {city: 'Oslo'}) RETURN count(*)")
    con = pool.take((None, None))
    try:
        assert con.sql("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall() == [
            (0,)
        ]
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
        with pytest.raises(duckdb.Error):
            con.sql("SELECT * FROM read_csv('/etc/hostname')").fetchall()
    finally:
        con.close()


def test_limits_key_the_connections(pool):
    small = pool.take((64, 1))
    try:
        assert small.sql(
            "SELECT current_setting('threads'), current_setting('memory_limit')"
        ).fetchall() == [(1, "61.0 MiB")]  # 64 MB
    finally:
        small.close()
    assert pool.idle((None, None)) == 0


def test_lent_once_bounded_and_closed_after_an_error(social, pool):
    a, b = pool.take((None, None)), pool.take((None, None))
    assert a is not b  # two callers at once get two connections
    c = pool.take((None, None))
    for con in (a, b, c):
        pool.give((None, None), con, [])
    assert pool.idle((None, None)) == 2  # the size; the third was closed
    with pytest.raises(duckdb.Error):
        c.sql("SELECT 1")
    with pytest.raises(QueryError, match="timed out"):
        social.query(
            # UNWIND first keeps the MATCH on DuckDB (query/traverse.py binds a first MATCH).
            "UNWIND [1] AS one MATCH (a:Person)-[r:Knows*1..4]-(b:Person)-[:Knows*1..4]-"
            "(c:Person)-[:Knows*1..4]-(d:Person) RETURN count(*)",
            timeout_s=0.2,
        )
    assert pool.idle((None, None)) == 1  # it took one; timed out, that one was closed


def test_concurrent_queries_get_their_own_connections(social, pool):
    from concurrent.futures import ThreadPoolExecutor

    queries = [
        # ORDER BY runs on DuckDB (the MATCH's rows come from the adjacency).
        f"MATCH (a:Person {{name: 'p{i:02d}'}})-[:Knows]->(b) RETURN b.name ORDER BY b.name"
        for i in range(6)
    ]
    serial = [sorted(map(str, social.query(q).to_pylist())) for q in queries]
    with ThreadPoolExecutor(3) as workers:
        parallel = list(
            workers.map(lambda q: sorted(map(str, social.query(q).to_pylist())), queries * 2)
        )
    assert parallel == serial * 2
    assert 1 <= pool.idle((None, None)) <= 2
