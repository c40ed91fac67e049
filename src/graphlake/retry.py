"""Bounded retry with jittered backoff that scales with how long an attempt takes.

A writer that loses a compare-and-swap re-runs its work on the new head. Waiting a
random time up to (attempt duration x 2^n) spreads racing writers apart whether an
attempt takes 5 ms (local disk) or a second (object storage).
"""

from __future__ import annotations

import random
import time


class Backoff:
    def __init__(self, attempts: int, floor_s: float = 0.005, cap_s: float = 5.0):
        self.attempts = attempts
        self.floor_s = floor_s
        self.cap_s = cap_s
        self._started = time.monotonic()

    def start(self) -> None:
        """Mark the start of an attempt."""
        self._started = time.monotonic()

    def wait(self, attempt: int) -> None:
        """Sleep before retrying after failed attempt number `attempt` (0-based)."""
        took = max(self.floor_s, time.monotonic() - self._started)
        time.sleep(random.uniform(0, min(self.cap_s, took * 2 ** min(attempt, 6))))
