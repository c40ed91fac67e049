"""The process-wide cache of adjacencies, keyed by exact table states.

An adjacency is immutable once built, and so is a table state (Lance branch, version) of
a table: the key is the graph's root, the edge table's state and its endpoint node
tables' states, so a write, merge, `optimize` or `gc` that moves a table gives a new key
and never a stale answer. Entries are evicted least recently used once their bytes
(`Csr.nbytes`) pass the budget: `BUDGET_BYTES` (default 512 MiB, enough for about 10M
edges with 10-character edge ids: 16 bytes per edge for both directions' int32 arrays,
about 14 for the id string, plus the node keys), or the environment variable
`GRAPHLAKE_ADJACENCY_CACHE_BYTES` read at import (the server's query workers inherit
it). `set_budget` changes it at run time. An adjacency larger than the whole budget is
returned to its caller but not kept.

The budget is the cache's own: it is not a query's memory limit. A query that needs an
adjacency pays its build (see `load.adjacency`'s `max_bytes`) and, on the server, runs in
a memory-capped worker process (graphlake.isolation) whose cache lives inside that cap.

Thread-safe: one lock guards the entries; builds of one key are serialized (a second
caller waits for the first build instead of repeating it), builds of different keys run
side by side.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Protocol


class Sized(Protocol):
    """What the cache holds: an adjacency, or an Arrow array aligned with one."""

    @property
    def nbytes(self) -> int: ...


DEFAULT_BUDGET_BYTES = 512 * 2**20


def _env_budget() -> int:
    raw = os.environ.get("GRAPHLAKE_ADJACENCY_CACHE_BYTES")
    if raw is None:
        return DEFAULT_BUDGET_BYTES
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_BUDGET_BYTES
    return max(value, 0)


BUDGET_BYTES = _env_budget()


class AdjacencyCache:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[Hashable, Sized] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}
        self.hits = self.misses = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Sized | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def get_or_build(self, key: Hashable, build: Callable[[], Sized]) -> Sized:
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            gate = self._building.setdefault(key, threading.Lock())
        with gate:
            found = self.get(key)  # built by the caller we waited for
            if found is not None:
                return found
            csr = build()
            with self._lock:
                self.misses += 1
                self._building.pop(key, None)
                self._put(key, csr)
            return csr

    def recent(self, match: Callable[[Hashable], bool], n: int = 2) -> list[tuple[Hashable, Sized]]:
        """Up to `n` entries whose key `match`es, most recently used first (the bases a
        delta can start from)."""
        with self._lock:
            found = [(k, v) for k, v in reversed(self._entries.items()) if match(k)]
        return found[:n]

    def put(self, key: Hashable, csr: Sized) -> None:
        with self._lock:
            self._put(key, csr)

    def _put(self, key: Hashable, csr: Sized) -> None:
        if key in self._entries:
            return
        size = csr.nbytes
        if size > self.budget_bytes:
            return  # larger than the whole budget: the caller uses it, the cache does not
        self._entries[key] = csr
        self._bytes += size
        self._evict()

    def _evict(self) -> None:
        while self._bytes > self.budget_bytes and self._entries:
            _, old = self._entries.popitem(last=False)
            self._bytes -= old.nbytes

    def set_budget(self, budget_bytes: int) -> None:
        with self._lock:
            self.budget_bytes = budget_bytes
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self.hits = self.misses = 0


CACHE = AdjacencyCache(BUDGET_BYTES)


def set_budget(budget_bytes: int) -> None:
    """The cache's budget in bytes (evicts least recently used entries beyond it)."""
    if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int) or budget_bytes < 0:
        raise ValueError(f"the adjacency cache budget must be bytes >= 0, got {budget_bytes!r}")
    CACHE.set_budget(budget_bytes)
