"""The fixed cost of one SQL statement (read.sql.run_sql): SQL graphlake generated from
Cypher skips the read-only re-parse while user SQL keeps it, and every statement's
timeout is served by one long-lived deadline thread that still interrupts at the
deadline, again until the query stops, and never after it stopped."""

from __future__ import annotations

import os
import threading
import time

import pytest

from graphlake.errors import QueryError, QueryTooLargeError
from graphlake.query import isolated
from graphlake.read import sql
from graphlake.read.sql import SqlLimits

# ORDER BY keeps the rest of the query in DuckDB (the first MATCH binds on the adjacency).
BOUND = "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name ORDER BY b.name"


class Parses:
    """read.sql._parse, counted."""

    def __init__(self) -> None:
        self.calls = 0
        self._real = sql._parse

    def __call__(self, con, query):
        self.calls += 1
        return self._real(con, query)


@pytest.fixture
def parses(monkeypatch) -> Parses:
    counted = Parses()
    monkeypatch.setattr(sql, "_parse", counted)
    return counted


def test_generated_sql_is_not_parsed_again_user_sql_is(social, parses) -> None:
    expected = social.sql(
        "SELECT b.name FROM Knows k JOIN Person a ON a.id = k.src JOIN Person b "
        "ON b.id = k.dst WHERE a.name = 'p02' ORDER BY b.name"
    )
    assert parses.calls == 1  # g.sql: user text, checked
    got = social.query(BOUND)
    assert parses.calls == 1  # Cypher: our own SELECT, not parsed a second time
    assert got.column(0).to_pylist() == expected.column(0).to_pylist() != []
    social.query(BOUND, explain=True)  # the explain steps are ours too
    assert parses.calls == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SELECT 1; SELECT 2", "exactly one SQL statement"),
        ("CREATE TABLE t (a INT)", "read-only"),
        ("SELECT 1; CREATE TABLE t (a INT)", "exactly one SQL statement"),
        ("EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "EXPLAIN of anything but one SELECT"),
    ],
)
def test_user_sql_is_still_checked(social, parses, text, message) -> None:
    with pytest.raises(QueryError, match=message):
        social.sql(text)
    assert parses.calls == 1


def test_the_server_worker_checks_user_sql(social, parses) -> None:
    """The HTTP route's worker job (query.isolated.sql_job) is user SQL: checked."""
    snapshot = social.snapshot()
    with pytest.raises(QueryError, match="exactly one SQL statement"):
        isolated.sql_job(social.uri, None, snapshot.commit, "SELECT 1; SELECT 2", None, SqlLimits())
    assert parses.calls == 1


class FakeConnection:
    """Counts interrupts; `interrupt` must not be called after `closed`."""

    def __init__(self) -> None:
        self.interrupts = 0
        self.closed = False

    def interrupt(self) -> None:
        assert not self.closed, "interrupted after the watchdog stopped"
        self.interrupts += 1


def _deadline_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "graphlake-sql-deadlines"]


def test_one_thread_serves_every_deadline(social) -> None:
    for _ in range(20):
        social.query(BOUND, timeout_s=30)
        social.sql("SELECT 1", timeout_s=30)
    assert len(_deadline_threads()) == 1
    assert not [t for t in threading.enumerate() if t.name == "graphlake-sql-watchdog"]


def test_interrupts_from_the_deadline_on_until_stopped() -> None:
    con = FakeConnection()
    dog = sql._Watchdog(con, 0.05, SqlLimits())  # type: ignore[arg-type]
    assert con.interrupts == 0 and not dog.fired
    started = time.monotonic()
    while con.interrupts < 3 and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert dog.fired and con.interrupts >= 3  # again every _INTERRUPT_EVERY_S
    dog.stop()
    con.closed = True
    time.sleep(0.2)  # FakeConnection fails the deadline thread if it interrupts now


def test_a_stopped_watchdog_is_never_interrupted() -> None:
    con = FakeConnection()
    dog = sql._Watchdog(con, 0.05, SqlLimits())  # type: ignore[arg-type]
    dog.stop()
    con.closed = True
    time.sleep(0.3)
    assert con.interrupts == 0 and not dog.fired
    dog.check()  # no timeout to report


def test_an_earlier_deadline_added_later_fires_on_time() -> None:
    late, early = FakeConnection(), FakeConnection()
    slow = sql._Watchdog(late, 30.0, SqlLimits())  # type: ignore[arg-type]
    started = time.monotonic()
    fast = sql._Watchdog(early, 0.1, SqlLimits())  # type: ignore[arg-type]
    while not fast.fired and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert fast.fired and time.monotonic() - started < 2
    assert late.interrupts == 0
    fast.stop()
    slow.stop()


def test_concurrent_watchdogs_each_fire_at_their_own_deadline() -> None:
    cons = [FakeConnection() for _ in range(6)]
    dogs = [
        sql._Watchdog(c, t, SqlLimits())  # type: ignore[arg-type]
        for c, t in zip(cons, (0.05, 30, 0.1, 30, 0.15, 30), strict=True)
    ]
    started = time.monotonic()
    while not all(d.fired for d in dogs[::2]) and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert [d.fired for d in dogs] == [True, False, True, False, True, False]
    for d in dogs:
        d.stop()


def test_a_failing_interrupt_does_not_end_the_deadline_thread() -> None:
    class Broken(FakeConnection):
        def interrupt(self) -> None:
            raise RuntimeError("connection already closed")

    broken = sql._Watchdog(Broken(), 0.01, SqlLimits())  # type: ignore[arg-type]
    con = FakeConnection()
    dog = sql._Watchdog(con, 0.1, SqlLimits())  # type: ignore[arg-type]
    started = time.monotonic()
    while not dog.fired and time.monotonic() - started < 5:
        time.sleep(0.01)
    assert dog.fired and con.interrupts >= 1
    assert len(_deadline_threads()) == 1
    dog.stop()
    broken.stop()


def test_finished_queries_do_not_pile_up_in_the_heap() -> None:
    limits = SqlLimits()
    for _ in range(1_000):  # each would otherwise wait its 60 s in the heap
        sql._Watchdog(FakeConnection(), 60.0, limits).stop()  # type: ignore[arg-type]
    running = sql._Watchdog(FakeConnection(), 60.0, limits)  # type: ignore[arg-type]
    assert len(sql._DEADLINES._heap) <= 2 * 1 + 64 + 1
    running.stop()


def test_a_user_query_past_its_deadline_times_out(social) -> None:
    with pytest.raises(QueryError, match=r"timed out after 0\.2 s"):
        social.sql("SELECT count(*) FROM range(100000000000)", timeout_s=0.2)
    assert social.sql("SELECT 1 AS one", timeout_s=5).to_pylist() == [{"one": 1}]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore:lance is not fork-safe")  # the child touches no Lance
def test_a_forked_child_gets_its_own_deadline_thread() -> None:
    sql._Watchdog(FakeConnection(), 0.01, SqlLimits()).stop()  # type: ignore[arg-type]
    assert _deadline_threads()  # the parent's thread exists
    pid = os.fork()
    if pid == 0:  # the child: no thread of the parent's, a fresh one on first use
        code = 1
        try:
            con = FakeConnection()
            dog = sql._Watchdog(con, 0.05, SqlLimits())  # type: ignore[arg-type]
            time.sleep(0.4)
            code = 0 if dog.fired and con.interrupts >= 1 else 2
            dog.stop()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# Generated SQL runs by one call of DuckDB's client (read.sql._reader: no lazy relation
# parsed and bound first); its answers, limits and timeout are those of `con.sql`'s.
DIRECT = [
    ("SELECT name, age FROM Person ORDER BY name", None),
    ("SELECT count(*) AS n, max(age) AS m FROM Person WHERE age > $a", {"a": 20}),
    ("SELECT name FROM Person WHERE name = $n OR name = $m ORDER BY 1", {"n": "p02", "m": "p03"}),
    ("SELECT CAST(NULL AS DATE) AS d, [1, 2] AS l, {'x': 1} AS s", None),
]


@pytest.mark.parametrize(("text", "params"), DIRECT)
def test_generated_sql_answers_as_con_sql(social, text, params) -> None:
    snap = social.snapshot("main")
    assert sql._submitter() is not None  # this DuckDB has the one-call run
    direct = sql.run_sql(snap, text, params=params, pooled=True, generated=True)
    checked = sql.run_sql(snap, text, params=params)  # user SQL: con.sql's relation
    assert direct.equals(checked) and direct.num_rows > 0


def test_without_the_one_call_run_generated_sql_uses_con_sql(social, monkeypatch) -> None:
    snap = social.snapshot("main")
    text, params = DIRECT[1]
    expected = sql.run_sql(snap, text, params=params, pooled=True, generated=True)
    monkeypatch.setattr(sql, "_submitter", lambda: None)
    assert sql.run_sql(snap, text, params=params, pooled=True, generated=True).equals(expected)


def test_generated_sql_keeps_its_limits(social) -> None:
    snap = social.snapshot("main")
    with pytest.raises(QueryError, match="more than 2 rows"):
        sql.run_sql(snap, "SELECT * FROM range(10)", max_rows=2, pooled=True, generated=True)
    with pytest.raises(QueryError, match="larger than 100 bytes"):
        sql.run_sql(
            snap,
            "SELECT * FROM range(100000)",
            limits=SqlLimits(max_result_bytes=100),
            pooled=True,
            generated=True,
        )
    with pytest.raises(QueryError, match="outside years"):
        sql.run_sql(snap, "SELECT 'infinity'::DATE AS d", pooled=True, generated=True)
    started = time.monotonic()
    with pytest.raises(QueryError, match="timed out"):
        sql.run_sql(
            snap,
            "SELECT count(*) FROM range(100000000000)",
            timeout_s=0.2,
            pooled=True,
            generated=True,
        )
    assert time.monotonic() - started < 10
    assert sql.run_sql(snap, "SELECT 1 AS one", pooled=True, generated=True).to_pylist() == [
        {"one": 1}
    ]


@pytest.mark.parametrize("pooled", [False, True])
def test_no_memory_for_a_connection_is_a_typed_error(social, monkeypatch, pooled) -> None:
    """Under a worker's address-space cap even opening a DuckDB connection can fail; that
    is the query's memory error, not a raw duckdb exception."""
    import duckdb

    def refuse(*args, **kwargs):
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")

    monkeypatch.setattr(duckdb, "connect", refuse)
    monkeypatch.setattr(sql, "_POOL", sql.ConnectionPool(sql._locked_connection))
    with pytest.raises(QueryTooLargeError, match="more memory than allowed"):
        sql.run_sql(social.snapshot("main"), "SELECT 1", pooled=pooled, generated=pooled)
