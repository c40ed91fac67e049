"""A small pool of locked-down DuckDB connections, for SQL that graphlake generates itself
(Cypher): opening and locking a fresh in-memory connection costs 30 ms on an idle machine
and over 100 ms on a loaded one, more than an anchored query's own work.

Safe to reuse because the statements are ours (one SELECT, compiled from Cypher), so no
user statement reaches a pooled connection; its configuration (no external access, no
temp directory, the memory and thread limits it was opened with) is locked when it is
made, and connections are kept apart by those limits. A connection is lent to one caller
at a time; it comes back only after a query that succeeded, with every relation the
caller registered dropped (the Arrow tables run_sql lends through handles of DuckDB's
client registry are released with the handles); anything else (an error, a timeout)
closes it. A forked child process starts with an empty pool (connections are not shared
across processes).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import duckdb


POOL_SIZE = 4  # idle connections kept per configuration


K = TypeVar("K", bound=Hashable)  # a connection configuration's key


class ConnectionPool(Generic[K]):
    def __init__(self, new: Callable[[K], duckdb.DuckDBPyConnection], size: int = POOL_SIZE):
        """`new(key)`: a locked-down connection for the configuration `key`."""
        self._new = new
        self._size = size
        self._lock = threading.Lock()
        self._idle: dict[K, list[duckdb.DuckDBPyConnection]] = {}
        self._pid = os.getpid()

    def take(self, key: K) -> duckdb.DuckDBPyConnection:
        """An idle connection for `key`, or a new one; the caller owns it until `give`."""
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's connections are not ours
                self._idle, self._pid = {}, os.getpid()
            idle = self._idle.get(key)
            if idle:
                return idle.pop()
        return self._new(key)

    def give(self, key: K, con: duckdb.DuckDBPyConnection, registered: Iterable[str]) -> None:
        """Return `con` after a successful query: its relations `registered` are dropped
        first; a connection that cannot be cleaned, or one over the size, is closed."""
        # on first use only: loads duckdb (an anchored Cypher traversal needs none)
        import duckdb

        try:
            for name in registered:
                con.unregister(name)
        except duckdb.Error:
            con.close()
            return
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if self._pid == os.getpid() and len(idle) < self._size:
                idle.append(con)
                return
        con.close()

    def idle(self, key: K) -> int:
        with self._lock:
            return len(self._idle.get(key, []))
