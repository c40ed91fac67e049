"""The server's background optimizer: keeps search indexes caught up, off the write path.

Writes and merges never build or fold ANN and full-text indexes (README "Search"); the
rows they add are searched exactly until an optimize. With `[auto_optimize] enabled =
true` in the server config, one daemon thread checks the configured branches (all by
default) every `interval_s` seconds and runs the ordinary `optimize` on a branch whose
head has passed the threshold (`search.upkeep.due`). One thread, one branch at a time, so
it never runs concurrently with itself; it holds no branch lock (an index build can take
minutes, and writers must not wait for it): optimize's compare-and-swap retries if a
writer moves the head meanwhile. Errors are logged, never raised; the next round retries.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlake.graph import Graph
    from graphlake.server.config import AutoOptimize

log = logging.getLogger(__name__)


class AutoOptimizer:
    def __init__(self, graph: Graph, settings: AutoOptimize) -> None:
        self.graph = graph
        self.settings = settings
        self._stop = threading.Event()
        self._round = threading.Lock()  # a manual `run_once` never overlaps the thread's
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._loop, name="graphlake-auto-optimize", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to stop and wait up to `timeout` s (an optimize in progress
        finishes first; the thread is a daemon, so a slow one never holds up exit)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> list[str]:
        """Check every configured branch once; returns the branches optimized."""
        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.search.upkeep import Threshold, due

        s = self.settings
        threshold = Threshold(s.uncovered_fraction, s.uncovered_rows)
        done: list[str] = []
        with self._round:
            for branch in s.branches or self.graph.branches():
                if self._stop.is_set():
                    break
                try:
                    pending = due(self.graph.snapshot(branch), threshold)
                    if pending:
                        log.info("auto-optimize %s: %s", branch, "; ".join(map(str, pending)))
                        commit = self.graph.optimize(branch)
                        log.info("auto-optimize %s: commit %s", branch, commit.id)
                        done.append(branch)
                except Exception:  # logged, never raised: the next round tries again
                    log.exception("auto-optimize of branch %r failed", branch)
        return done

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.interval_s):
            try:
                self.run_once()
            except Exception:  # e.g. listing the branches failed; keep the thread alive
                log.exception("auto-optimize round failed")
