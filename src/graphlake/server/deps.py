"""What routes share: the graph, the configuration, and per-branch writer locks.

One `Graph` serves every request; each write opens its own Lance datasets and publishes
with a compare-and-swap, so threads need no lock for correctness. Writers *to the same
branch* inside this process still take a lock: they would otherwise race each other's
CAS and burn their bounded retries (merges retry 5 times) under load. Other processes
writing the same graph are still handled by the CAS.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from graphlake.graph import Graph
from graphlake.isolation import Workers, shared_workers
from graphlake.server.algo_cache import AnswerCache
from graphlake.server.auth import TokenTable
from graphlake.server.config import ServerConfig
from graphlake.server.slots import Slots

if TYPE_CHECKING:
    from graphlake.server.webhooks.engine import WebhookEngine
from graphlake.server.throttle import FailureThrottle

QUERY_WARM = "graphlake.query.isolated:warm"  # run once in each new query worker


class BranchLocks:
    """A fixed set of locks striped by branch name: bounded memory whatever names arrive.

    Two branches may share a stripe; that only serialises their writers, it never
    deadlocks (a request holds at most one branch lock).
    """

    def __init__(self, stripes: int = 64) -> None:
        self._locks = [threading.Lock() for _ in range(stripes)]

    @contextmanager
    def hold(self, branch: str) -> Iterator[None]:
        with self._locks[hash(branch) % len(self._locks)]:
            yield


class AppState:
    def __init__(self, graph: Graph, config: ServerConfig):
        self.graph = graph
        self.config = config
        self.tokens = TokenTable(config.tokens, config.token_names, config.token_branches)
        self.throttle = FailureThrottle()  # failed logins and 401s answer late
        self.locks = BranchLocks()
        limits = config.limits
        self.reads = Slots(
            limits.max_concurrent_reads,
            "max_concurrent_reads",
            "reads (table reads, SQL, search, diffs, merge previews, history pages)",
        )
        self.loads = Slots(limits.max_concurrent_loads, "max_concurrent_loads", "loads")
        # Completed graph algorithm answers, for their next pages (server/algo_cache.py).
        self.algo_answers = AnswerCache(limits.algo_cache_mb * 2**20)
        # The webhook engine while the app runs (server/webhooks/; None without webhooks).
        self.webhooks: WebhookEngine | None = None

    @property
    def workers(self) -> Workers:
        """The query worker processes (graphlake.isolation): one per read slot, shared by
        the apps of one process that have the same limits. Each starts with
        `OMP_NUM_THREADS` = `algo_threads` (NetworKit's and BLAS's thread pools)."""
        limits = self.config.limits
        memory_mb = limits.query_memory_mb + limits.adjacency_memory_mb  # see config.Limits
        return shared_workers(
            limits.max_concurrent_reads, memory_mb, QUERY_WARM, threads=limits.algo_threads
        )


def _state(request: Request) -> AppState:
    return request.app.state.graphlake


State = Annotated[AppState, Depends(_state)]
