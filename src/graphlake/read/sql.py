"""Read-only SQL through DuckDB over one pinned snapshot.

Each table is registered under its type name; external access (files, network,
`ATTACH`, `COPY`, extension loading) is disabled, DuckDB gets no temp directory (with
external access off DuckDB still lets a query read and write its temp directory, by
default `<cwd>/.tmp`), and the configuration is locked before the query runs. Only one
SELECT statement is accepted, or an `EXPLAIN [ANALYZE]` of one (`EXPLAIN ANALYZE` runs
the statement it wraps); SQL graphlake generated itself (`generated=True`, Cypher's) is
one SELECT by construction and is not parsed a second time to check it.

`SqlLimits` bounds a query: its text, its wall time from parsing to the last result byte,
DuckDB's memory and threads, and the rows and bytes of its result. A timeout raises
`QueryTimeoutError`, DuckDB's out-of-memory error and an oversized result
`QueryTooLargeError`; one daemon thread keeps every running query's deadline (a heap)
and interrupts its connection from then on until the query stops. DuckDB's
`memory_limit` does not cover the values a query builds (lists, strings): only a worker
process bounds those (graphlake.isolation, used by the server). `params` are DuckDB
prepared parameters (`$name`), bound once.

The fixed cost of a statement in DuckDB 2.0.1's Python client (measured in a warm loop,
CPU ms, 2-core machine at load 5-9; `duckdb._seam` is the client's own layer between its
Python relations and the engine):
- `con.sql(text)` parses the text, runs the statements before the last and binds the last
  one (capturing Python variables it names) into a lazy relation; its terminal
  (`to_arrow_reader`) renders the text again and runs it through `_seam.submit`, which
  parses and binds it once more: ~0.4 of a ~1.5 ms statement. Generated SQL is handed to
  `_seam.submit(con, text, values, "stream", batch_rows)` directly (`_reader`); user SQL
  keeps `con.sql`.
- `con.register(name, obj)` / `unregister(name)` are catalog changes, ~0.3 each; an
  explicit transaction around them does not help. A handle of the client's registry
  (`_seam.register_source(con, obj)`, a generated name) costs ~0.05 and is released when
  the handle is dropped (a later read fails: "which was released"); it is what `con.sql`
  uses for a captured Python variable, read under its name by a leading `WITH name AS NOT
  MATERIALIZED (SELECT * FROM "<handle>")`. Generated SQL reads its Arrow tables and
  Lance datasets that way (`_lend`); a Lance dataset read so still gets its filters and
  projections (a key lookup on 100k rows: 1.5 CPU-ms lent, 2.0 registered).
- `con.register` accepts only the known Python types (pandas, pyarrow Table / Dataset /
  RecordBatchReader / Scanner, NumPy, relations): a wrapper object that would let one
  registration be re-pointed at new rows is refused, also by `register_source`.
- `SELECT 1` round trip ~0.2 (rows) / ~0.23 (Arrow); a `count(*)` over a registered
  100-row Arrow table ~0.5; `con.execute(...)` then `con.to_arrow_table()` reads the
  rows back through a second statement (the client warns of the copy).
"""

from __future__ import annotations

import datetime as dt
import functools
import heapq
import itertools
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.errors import QueryError, QueryTimeoutError, QueryTooLargeError
from graphlake.read.snapshot import Snapshot
from graphlake.read.sql_pool import ConnectionPool
from graphlake.sqltext import ident

if TYPE_CHECKING:
    import duckdb

_BATCH_ROWS = 4096  # result rows fetched at a time: the row and byte limits act per batch
_INTERRUPT_EVERY_S = 0.05
DEFAULT_TIMEOUT_S = 60.0  # the library's time limit of a query unless the caller sets one


@dataclass(frozen=True)
class SqlLimits:
    """Bounds of one query; `None` leaves that dimension unbounded."""

    max_rows: int | None = None
    timeout_s: float | None = None  # the whole run: parse, bind, execute, fetch
    max_query_chars: int | None = None
    max_result_bytes: int | None = None  # Arrow bytes of the result
    memory_limit_mb: int | None = None  # DuckDB's memory_limit (no spilling: no temp dir)
    # the largest adjacency a Cypher query may build, and the adjacency cache's budget in
    # a query worker (None: memory_limit_mb bounds the build, the cache keeps its own)
    adjacency_memory_mb: int | None = None
    threads: int | None = None
    # a graph algorithm run of a Cypher CALL (query/calls.py): its memory estimate's limit
    # (None: the algorithms' default) and the most threads it may use (None: no cap); the
    # server gives both doors to its algorithms, /algo and CALL, the same values
    algo_memory_mb: int | None = None
    algo_threads: int | None = None
    timeout_name: str = "timeout_s"  # what to raise, as the timeout message says


def seconds(value: float) -> str:
    """`29.99998737` -> `30`, `0.25` -> `0.25`: a time for a message."""
    return f"{round(value, 2):g}"


def timeout_message(timeout_s: float | None, limits: SqlLimits) -> str:
    return (
        f"the query timed out after {seconds(timeout_s or 0)} s (the limit "
        f"{limits.timeout_name}); narrow it (a LIMIT, an anchored MATCH, fewer hops) "
        f"or raise {limits.timeout_name}"
    )


def run_sql(
    snapshot: Snapshot,
    query: str,
    *,
    max_rows: int | None = None,
    timeout_s: float | None = None,
    limits: SqlLimits | None = None,
    tables: Collection[str] | None = None,
    extra: Mapping[str, object] | None = None,
    pooled: bool = False,
    params: Mapping[str, object] | None = None,
    generated: bool = False,
) -> pa.Table:
    """The result of one read-only query; `max_rows` / `timeout_s` override `limits`.
    `tables`: register only these (a generated query names the tables it reads);
    `extra`: more relations (Arrow tables, datasets) to register under their names.
    `pooled`: run on a reused locked-down connection (see read.sql_pool), only for SQL
    graphlake generated itself; user SQL always gets a fresh connection. `params`: values
    of the statement's `$name` prepared parameters. `generated`: the statement is
    graphlake's own, compiled from Cypher (query.executor: one SELECT, literals bound as
    parameters or quoted by its one generator), so the check that it is one read-only
    statement (a second parse) is skipped; never set it for text a user wrote (g.sql,
    HTTP, data checks): those are always checked."""
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    limits = limits or SqlLimits()
    max_rows = max_rows if max_rows is not None else limits.max_rows
    timeout_s = timeout_s if timeout_s is not None else limits.timeout_s
    if limits.max_query_chars is not None and len(query) > limits.max_query_chars:
        raise QueryTooLargeError(
            f"the query is longer than {limits.max_query_chars} characters "
            f"(the limit sql_max_query_chars)"
        )
    key = (limits.memory_limit_mb, limits.threads)
    try:
        con = _POOL.take(key) if pooled else duckdb.connect(":memory:")
    except duckdb.Error as exc:  # e.g. no memory for a connection under a worker's cap
        raise _query_error(exc, None, limits) from None
    watchdog = _Watchdog(con, timeout_s, limits)
    registered: list[str] = []
    handles: list[object] = []  # Arrow tables lent for this statement only (_lend)
    done = False
    try:
        statement = query if generated else _parse(con, query)
        datasets = (
            snapshot.datasets()
            if tables is None
            else {name: snapshot.dataset(name) for name in tables}
        )
        relations = {**datasets, **(extra or {})}
        if generated:
            statement = _lend(con, statement, relations, handles)
        for name, ds in relations.items():
            con.register(name, ds)
            registered.append(name)
        if not pooled:  # a pooled connection was locked down when it was made
            _lock_down(con, limits)
        watchdog.check()  # an interrupt while nothing executed is dropped by DuckDB
        reader = _reader(con, statement, params, generated)
        table = _fetch(reader, max_rows, limits.max_result_bytes, watchdog)
        _check_python_range(table)
        done = True
        return table
    except (duckdb.Error, pa.ArrowException, OSError) as exc:
        # Errors met while streaming the result arrive through Arrow as OSError.
        raise _query_error(exc, watchdog, limits) from None
    finally:
        watchdog.stop()
        if pooled and done and not watchdog.fired:
            _POOL.give(key, con, registered)
        else:
            con.close()


@contextmanager
def sql_stream(
    snapshot: Snapshot, query: str, *, limits: SqlLimits | None = None
) -> Iterator[tuple[pa.Schema, Iterator[pa.RecordBatch]]]:
    """The result of one read-only query as record batches, for results of any size
    (export): memory holds one batch at a time. `limits` bounds memory and threads only;
    the connection stays open until the `with` block ends."""
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    limits = limits or SqlLimits()
    con = duckdb.connect(":memory:")
    try:
        try:
            statement = _parse(con, query)
            for name, ds in snapshot.datasets().items():
                con.register(name, ds)
            _lock_down(con, limits)
            reader = con.sql(statement).to_arrow_reader(_BATCH_ROWS)
        except (duckdb.Error, pa.ArrowException, OSError) as exc:
            raise QueryError(f"SQL error: {exc}") from None
        yield reader.schema, _streamed(reader)
    finally:
        con.close()


def _streamed(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    try:
        yield from reader
    except (duckdb.Error, pa.ArrowException, OSError) as exc:
        # Errors met while streaming the result arrive through Arrow as OSError.
        raise QueryError(f"SQL error: {exc}") from None


def _query_error(exc: Exception, watchdog: _Watchdog | None, limits: SqlLimits) -> QueryError:
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    # whatever DuckDB was doing when the interrupt landed
    if watchdog is not None and watchdog.fired:
        return QueryTimeoutError(timeout_message(watchdog.timeout_s, limits))
    if isinstance(exc, duckdb.OutOfMemoryException) or "Out of Memory" in str(exc):
        return QueryTooLargeError(
            f"the query needs more memory than allowed "
            f"({limits.memory_limit_mb} MB, the limit "
            f"sql_memory_limit_mb); narrow it or raise the limit"
        )
    return QueryError(f"SQL error: {exc}")


def _lock_down(con: duckdb.DuckDBPyConnection, limits: SqlLimits) -> None:
    # An empty temp_directory allows no directory at all (and disables spilling).
    con.execute("SET temp_directory = ''")
    if limits.memory_limit_mb is not None:
        con.execute(f"SET memory_limit = '{int(limits.memory_limit_mb)}MB'")
    if limits.threads is not None:
        con.execute(f"SET threads = {int(limits.threads)}")
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")


def _locked_connection(key: tuple[int | None, int | None]) -> duckdb.DuckDBPyConnection:
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    con = duckdb.connect(":memory:")
    _lock_down(con, SqlLimits(memory_limit_mb=key[0], threads=key[1]))
    return con


_POOL = ConnectionPool(_locked_connection)


def parse_select(query: str) -> str:
    """The one SELECT statement of `query` (QueryError otherwise: DuckDB's parser only,
    nothing runs, no table is needed). Data checks are validated with it when set."""
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        statements = _statements(con, query)
    finally:
        con.close()
    if len(statements) != 1:
        raise QueryError(f"expected exactly one SQL statement, got {len(statements)}")
    kind = statements[0].type.name
    if kind != "SELECT":
        raise QueryError(f"only read-only queries are allowed (got a {kind} statement)")
    return str(statements[0].query)


def _parse(con: duckdb.DuckDBPyConnection, query: str) -> str:
    """The one statement of `query`: a SELECT, or an EXPLAIN of a SELECT."""
    statements = _statements(con, query)
    if len(statements) != 1:
        raise QueryError(f"expected exactly one SQL statement, got {len(statements)}")
    kind = statements[0].type.name
    if kind == "EXPLAIN":
        _check_explained(con, statements[0].query)
    elif kind != "SELECT":
        raise QueryError(f"only read-only queries are allowed (got a {kind} statement)")
    return statements[0].query


def _statements(con: duckdb.DuckDBPyConnection, query: str) -> list:
    # on first use only: loads duckdb (an anchored Cypher traversal needs none)
    import duckdb

    try:
        return con.extract_statements(query)
    except duckdb.Error as exc:
        raise QueryError(f"SQL error: {exc}") from None


# EXPLAIN, then optionally ANALYZE / ANALYSE or a parenthesised option list, with any
# whitespace and comments in between.
_GAP = r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*"
_EXPLAIN = re.compile(
    rf"^{_GAP}EXPLAIN\b{_GAP}(?:(?:ANALY[SZ]E\b)|\([^()]*\))?{_GAP}", re.IGNORECASE | re.DOTALL
)


def _check_explained(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """Refuse EXPLAIN of anything but one SELECT: `EXPLAIN ANALYZE` executes it."""
    m = _EXPLAIN.match(text)
    inner = _statements(con, text[m.end() :]) if m else []
    if len(inner) != 1 or inner[0].type.name != "SELECT":
        raise QueryError(
            "EXPLAIN of anything but one SELECT statement is disabled "
            "(EXPLAIN ANALYZE executes the statement it wraps)"
        )


@functools.cache
def _client_seam() -> Any:  # duckdb._seam, or None in a client without it
    try:
        from duckdb import _seam  # noqa: PLC2701 - the client's own seam, guarded
    except ImportError:  # pragma: no cover - another DuckDB client
        return None
    return _seam


_LEADING_WITH = re.compile(r"\s*WITH(?:\s+RECURSIVE)?\s", re.IGNORECASE)
_LEADING_SELECT = re.compile(r"\s*SELECT\s", re.IGNORECASE)


def _lend(
    con: duckdb.DuckDBPyConnection,
    statement: str,
    relations: dict[str, object],
    handles: list[object],
) -> str:
    """`statement` reading the Arrow tables and datasets (Lance's) of `relations` (taken
    out of it) through handles of DuckDB's client registry (kept in `handles`: each is
    released when its handle is dropped, so nothing stays on a pooled connection), each
    under its name by a leading common table expression, `WITH "name" AS NOT
    MATERIALIZED (SELECT * FROM "<handle>")`, as DuckDB's own client reads Python
    variables. `con.register` and
    `unregister` are catalog changes, ~0.3 CPU-ms each; a handle ~0.05. Only for SQL
    graphlake generated (one SELECT, or a WITH list leading one); anything else, or a
    client without the registry, keeps `relations` whole for `con.register`."""
    seam = _client_seam()
    import pyarrow.dataset as pads  # loaded with Lance already

    tables = {n: r for n, r in relations.items() if isinstance(r, pa.Table | pads.Dataset)}
    register = getattr(seam, "register_source", None)
    if not tables or register is None:
        return statement
    lead = _LEADING_WITH.match(statement)
    if lead is None and _LEADING_SELECT.match(statement) is None:
        return statement
    listed = []
    for name, table in tables.items():
        handle = register(con, table, name)
        handles.append(handle)
        listed.append(f"{ident(name)} AS NOT MATERIALIZED (SELECT * FROM {ident(handle.name)})")
        del relations[name]
    if lead is None:
        return f"WITH {', '.join(listed)}\n{statement}"
    return f"{statement[: lead.end()]}{', '.join(listed)},\n{statement[lead.end() :]}"


@functools.cache
def _submitter() -> Callable[..., Any] | None:
    """DuckDB's own one-call run of a statement (`duckdb._seam.submit`, what a relation's
    terminal calls), or None in a client without it."""
    submit = getattr(_client_seam(), "submit", None)
    return submit if callable(submit) else None


def _reader(
    con: duckdb.DuckDBPyConnection,
    statement: str,
    params: Mapping[str, object] | None,
    generated: bool,
) -> pa.RecordBatchReader:
    """The statement's result as a reader of `_BATCH_ROWS`-row batches. `con.sql` builds a
    lazy relation first (its Python client parses and binds the text, then parses and binds
    it again to run it: ~0.4 CPU-ms of a ~1.5 ms statement); graphlake's own SQL (one
    SELECT) is run once, by the call the relation's terminal makes."""
    submit = _submitter() if generated else None
    if submit is not None:
        values = dict(params) if params else None
        return submit(con, statement, values, "stream", _BATCH_ROWS).arrow_reader()
    rel = con.sql(statement, params=dict(params)) if params else con.sql(statement)
    return rel.to_arrow_reader(_BATCH_ROWS)


def _fetch(
    reader: pa.RecordBatchReader,
    max_rows: int | None,
    max_bytes: int | None,
    watchdog: _Watchdog,
) -> pa.Table:
    batches, rows, size = [], 0, 0
    for batch in reader:
        watchdog.check()  # fetching counts against the time limit too
        batches.append(batch)
        rows += batch.num_rows
        size += batch.nbytes
        if max_rows is not None and rows > max_rows:
            raise QueryError(f"query returned more than {max_rows} rows; add a LIMIT")
        if max_bytes is not None and size > max_bytes:
            raise QueryTooLargeError(
                f"query result is larger than {max_bytes} bytes (the "
                f"limit sql_max_result_bytes); select fewer columns or "
                f"add a LIMIT"
            )
    watchdog.check()
    return pa.Table.from_batches(batches, schema=reader.schema)


class _Watchdog:
    """Interrupts the connection from the deadline on, again and again until stopped.

    DuckDB drops an interrupt that arrives while no query executes (during parsing or
    binding, between fetches), so a single interrupt can be lost. The interrupts come
    from one long-lived thread that serves every query's deadline (`_Deadlines`), not a
    thread per query: starting and joining one cost ~0.2 ms per statement, more on a
    loaded machine. Once `stop` returns, the connection is interrupted no more.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, timeout_s: float | None, limits: SqlLimits):
        self.fired = False
        self.stopped = False
        self.timeout_s = timeout_s
        self._limits = limits
        self._con: duckdb.DuckDBPyConnection | None = con
        self._lock = threading.Lock()  # interrupt and stop never overlap
        if timeout_s is not None:
            _DEADLINES.add(self, time.monotonic() + timeout_s)

    def interrupt(self) -> bool:
        """Called at and after the deadline: interrupt the query unless it has stopped.
        Whether to come back (it has not stopped)."""
        with self._lock:
            if self.stopped or self._con is None:
                return False
            self.fired = True
            self._con.interrupt()
            return True

    def check(self) -> None:
        if self.fired:
            raise QueryTimeoutError(timeout_message(self.timeout_s, self._limits))

    def stop(self) -> None:
        with self._lock:  # waits for an interrupt under way: none comes after this
            was_running, self.stopped, self._con = not self.stopped, True, None
        if was_running and self.timeout_s is not None:
            _DEADLINES.stopped()


class _Deadlines:
    """One daemon thread and a heap of (deadline, watchdog): at each deadline it
    interrupts that watchdog's connection, then again every `_INTERRUPT_EVERY_S` until the
    watchdog stops. Stopped watchdogs leave the heap when they reach its top, or when they
    outnumber the running ones (a compaction), so finished queries hold no memory for
    their whole timeout. The thread starts on first use, and again in a forked child."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Watchdog]] = []
        self._order = itertools.count()  # ties: first come, first interrupted
        self._running = 0  # watchdogs added and not yet stopped
        self._thread: threading.Thread | None = None

    def add(self, dog: _Watchdog, at: float) -> None:
        with self._cond:
            self._running += 1
            self._push(dog, at)

    def stopped(self) -> None:
        with self._cond:
            self._running -= 1
            if len(self._heap) > 2 * self._running + 64:
                self._heap = [e for e in self._heap if not e[2].stopped]
                heapq.heapify(self._heap)

    def _push(self, dog: _Watchdog, at: float) -> None:  # under self._cond
        heapq.heappush(self._heap, (at, next(self._order), dog))
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, daemon=True, name="graphlake-sql-deadlines"
            )
            self._thread.start()
        elif self._heap[0][2] is dog:  # earlier than what the thread waits for
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                dog = self._due()
            try:
                again = dog.interrupt()
            except Exception:  # one connection's failure must not end the
                again = False  # thread that keeps every other query's deadline
            if again:  # still running: interrupt it again shortly
                with self._cond:
                    self._push(dog, time.monotonic() + _INTERRUPT_EVERY_S)

    def _due(self) -> _Watchdog:  # under self._cond: waits for the next deadline
        while True:
            while self._heap and self._heap[0][2].stopped:
                heapq.heappop(self._heap)
            if not self._heap:
                self._cond.wait()
                continue
            wait = self._heap[0][0] - time.monotonic()
            if wait <= 0:
                return heapq.heappop(self._heap)[2]
            self._cond.wait(wait)


_DEADLINES = _Deadlines()
# A forked child has no deadline thread and maybe a lock held by the parent's: start over.
os.register_at_fork(after_in_child=_DEADLINES._reset)


# Python's datetime covers years 1 to 9999; DuckDB also has years up to 294247 and
# 'infinity'. Bounds in days / seconds since the epoch, the upper one exclusive.
_EPOCH = dt.datetime(1970, 1, 1)
_LOW_S = int((dt.datetime(1, 1, 1) - _EPOCH).total_seconds())
_HIGH_S = int((dt.datetime(9999, 12, 31) - _EPOCH).total_seconds()) + 86_400
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_MS_PER_DAY = 86_400_000


def _check_python_range(table: pa.Table) -> None:
    """Refuse dates and timestamps a client (Python, JSON) cannot represent, by name."""
    for field, column in zip(table.schema, table.columns, strict=True):
        for values in _temporal_leaves(column):
            if not _in_python_range(values):
                raise QueryError(
                    f"column {field.name!r} holds a date or timestamp outside years "
                    f"1-9999 (or infinity); cast it to VARCHAR to read it"
                )


def _temporal_leaves(arr: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    """The date and timestamp arrays inside `arr`, however deeply nested."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    t = arr.type
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        return list(chunks)
    out: list[pa.Array] = []
    for c in chunks:
        if pa.types.is_map(t):
            out += _temporal_leaves(c.keys) + _temporal_leaves(c.items)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            out += _temporal_leaves(c.flatten())
        elif pa.types.is_struct(t):
            for i in range(t.num_fields):
                out += _temporal_leaves(c.field(i))
    return out


def _in_python_range(values: pa.Array) -> bool:
    t = values.type
    # Compare the stored integers: converting an out-of-range value is what fails.
    if pa.types.is_timestamp(t):
        per = _PER_SECOND[t.unit]
        low, high, storage = _LOW_S * per, _HIGH_S * per, pa.int64()
    elif pa.types.is_date32(t):
        low, high, storage = _LOW_S // 86_400, _HIGH_S // 86_400, pa.int32()
    else:  # date64: milliseconds
        low, high = _LOW_S // 86_400 * _MS_PER_DAY, _HIGH_S // 86_400 * _MS_PER_DAY
        storage = pa.int64()
    extremes = pc.min_max(values.view(storage)).as_py()
    if extremes["min"] is None:
        return True
    return low <= extremes["min"] and extremes["max"] < high
