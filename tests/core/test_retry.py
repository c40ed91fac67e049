"""`retry_while_head_moves`: which failures re-run an attempt, and how it gives up."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from graphlake.errors import ConcurrentWriteError, DataError, StaleReadError
from graphlake.retry import HeadMoved, retry_while_head_moves


class Flaky:
    """An attempt that raises the given errors in turn, then returns "done"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"


def run(attempt: Callable[[], object], attempts: int = 3, **kw: object) -> object:
    return retry_while_head_moves(
        attempt, branch="main", what="write", attempts=attempts, max_wait_s=0.001, **kw
    )


def test_lost_races_are_retried() -> None:
    attempt = Flaky(ConcurrentWriteError("cas"), HeadMoved())
    assert run(attempt) == "done"
    assert attempt.calls == 3


def test_gives_up_after_the_last_attempt() -> None:
    attempt = Flaky(*(ConcurrentWriteError("cas") for _ in range(5)))
    with pytest.raises(
        ConcurrentWriteError, match="kept moving during the write: gave up after 3 attempts"
    ) as e:
        run(attempt)
    assert attempt.calls == 3
    assert not isinstance(e.value, StaleReadError)


@pytest.mark.parametrize("error", [StaleReadError("stale"), DataError("bad row")])
def test_other_errors_end_the_loop(error: Exception) -> None:
    # StaleReadError is a ConcurrentWriteError, yet re-running cannot refresh the
    # caller's reads: it must reach the caller at once.
    attempt = Flaky(error)
    with pytest.raises(type(error)):
        run(attempt)
    assert attempt.calls == 1


def test_also_retry() -> None:
    class Moved(Exception):
        pass

    assert run(Flaky(Moved()), also_retry=(Moved,)) == "done"
    with pytest.raises(Moved):
        run(Flaky(Moved()))


def test_hooks_run_before_every_attempt_and_after_every_retried_loss() -> None:
    # Writers wait for merge intents before each attempt; a merge declares or renews
    # its intent after each lost race it will retry (not after the last one).
    calls: list[str] = []
    attempt = Flaky(ConcurrentWriteError("cas"), HeadMoved())

    def traced() -> str:
        calls.append("attempt")
        return attempt()

    assert (
        run(
            traced,
            before_attempt=lambda: calls.append("before"),
            on_lost=lambda: calls.append("lost"),
        )
        == "done"
    )
    assert calls == ["before", "attempt", "lost", "before", "attempt", "lost", "before", "attempt"]
    calls.clear()
    with pytest.raises(ConcurrentWriteError, match="gave up"):
        run(
            lambda: calls.append("attempt") or Flaky(ConcurrentWriteError("cas"))(),
            attempts=2,
            on_lost=lambda: calls.append("lost"),
        )
    assert calls == ["attempt", "lost", "attempt"]
