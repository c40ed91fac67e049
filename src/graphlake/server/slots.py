"""Caps on how many expensive requests (table reads and SQL, loads) run at once.

Each such request holds a worker thread and memory for as long as it runs; a bounded
number of slots keeps a burst of them from taking the whole server. A request that finds
no free slot within a second gets 503 with `Retry-After`, naming the limit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from graphlake.server.errors import ApiError

_WAIT_S = 1.0


class Slots:
    def __init__(self, count: int, limit_name: str, what: str):
        self._free = threading.BoundedSemaphore(count)
        self._count = count
        self._limit_name = limit_name
        self._what = what

    def acquire(self) -> None:
        """Take a slot (waiting up to a second; blocks the calling thread) or 503."""
        if not self._free.acquire(timeout=_WAIT_S):
            raise ApiError(
                503,
                "ServerBusy",
                f"{self._count} {self._what} already running (the limit "
                f"{self._limit_name}); retry shortly",
                {"Retry-After": "1"},
            )

    def release(self) -> None:
        self._free.release()

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()
