"""Bounded retry with jittered backoff that scales with how long an attempt takes.

A writer that loses a compare-and-swap re-runs its work on the new head. Waiting a
random time up to (attempt duration x 2^n) spreads racing writers apart whether an
attempt takes 5 ms (local disk) or a second (object storage).

`retry_while_head_moves` is the one loop writes, merges and optimize publish through.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from graphlake.errors import ConcurrentWriteError, StaleReadError

T = TypeVar("T")


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


class HeadMoved(Exception):
    """The branch ref moved while we wrote table effects: start over on the new head."""


def retry_while_head_moves(
    attempt: Callable[[], T],
    *,
    branch: str,
    what: str,
    attempts: int,
    max_wait_s: float = 5.0,
    also_retry: tuple[type[Exception], ...] = (),
    before_attempt: Callable[[], None] | None = None,
    on_lost: Callable[[], None] | None = None,
) -> T:
    """Run `attempt` (read the head of `branch`, build on it, publish with a ref CAS)
    until it returns, at most `attempts` times.

    Re-run, after a backoff, when the attempt lost the race: the ref CAS failed
    (`ConcurrentWriteError`), a Lance branch moved because the ref did (`HeadMoved`), or
    one of `also_retry`. Every other error ends the loop, and so does `StaleReadError`
    although it is a `ConcurrentWriteError`: the caller's reads are stale, and running
    the same attempt on the new head cannot make them fresh. After the last attempt,
    raises `ConcurrentWriteError` without waiting first. `what` names the operation in
    that message.

    An attempt opens its own `Publication`, so its recovery record is removed (on the
    way out of the `with`) before the backoff, not held through it.

    `before_attempt` runs before every attempt (writers wait there for merges that
    declared an intent on the branch); `on_lost` after every lost race that will be
    retried, before the backoff (a merge declares or renews its intent there). See
    `graphlake.catalog.intents`.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    retryable: tuple[type[Exception], ...] = (ConcurrentWriteError, HeadMoved, *also_retry)
    backoff = Backoff(attempts, cap_s=max_wait_s)
    for n in range(attempts):
        if before_attempt is not None:
            before_attempt()
        backoff.start()
        try:
            return attempt()
        except StaleReadError:
            raise
        except retryable:
            if n == attempts - 1:
                raise ConcurrentWriteError(
                    f"branch {branch!r} kept moving during the {what}: gave up after "
                    f"{attempts} attempts; retry later"
                ) from None
            if on_lost is not None:
                on_lost()
            backoff.wait(n)
    raise AssertionError("unreachable")
