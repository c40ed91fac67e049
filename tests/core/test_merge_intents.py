"""Merge intents (issue 12): writers wait for a merge that declared one, never for long.

The intent module's clock and sleep are replaced by a fake (`clock`), so waiting is
observed as requested sleeps rather than timed; the graphs are real, local and on S3.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

import pytest

import graphlake as gl
from graphlake.catalog import intents as intents_mod
from graphlake.catalog.intents import LEASE_S, WRITER_MAX_WAIT_S, MergeIntents
from graphlake.merge import engine


class FakeTime:
    """Stands in for the `time` module inside `graphlake.catalog.intents`."""

    def __init__(self) -> None:
        self.now = time.time()
        self.mono = 1000.0
        self.sleeps: list[float] = []
        self.on_sleep: Callable[[], None] = lambda: None

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.advance(seconds)
        self.on_sleep()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.mono += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(intents_mod, "time", fake)
    return fake


def _names(g: gl.Graph) -> set[str]:
    return set(g.nodes("Person").column("id").to_pylist())


def _add(g: gl.Graph, name: str, branch: str = "main") -> None:
    with g.write(branch, message=f"add {name}") as w:
        w.insert("Person", [{"name": name}])


def test_a_write_without_intents_does_not_wait(people: gl.Graph, clock: FakeTime) -> None:
    _add(people, "Dan")
    assert clock.sleeps == []
    assert "Dan" in _names(people)


def test_a_writer_waits_for_a_live_intent_until_it_is_released(
    people: gl.Graph, clock: FakeTime
) -> None:
    intents = MergeIntents(people.repo.store)
    intent = intents.declare("main")
    clock.on_sleep = lambda: intents.release(intent)  # the merge ends while we wait
    _add(people, "Dan")
    assert len(clock.sleeps) == 1
    assert "Dan" in _names(people)


def test_an_intent_only_holds_writers_of_its_branch(people: gl.Graph, clock: FakeTime) -> None:
    people.create_branch("dev")
    MergeIntents(people.repo.store).declare("main", lease_s=3600)
    _add(people, "Dan", branch="dev")
    assert clock.sleeps == []


def test_an_expired_intent_does_not_block_and_is_removed(people: gl.Graph, clock: FakeTime) -> None:
    # A merger killed while it held an intent never releases it: its lease ends it.
    intents = MergeIntents(people.repo.store)
    intents.declare("main")
    clock.advance(LEASE_S + 0.01)
    _add(people, "Dan")
    assert clock.sleeps == []
    assert intents.list("main") == []
    assert "Dan" in _names(people)


def test_a_writer_waits_at_most_its_budget(people: gl.Graph, clock: FakeTime) -> None:
    # However long an intent claims to live (a hung merger, a skewed clock), the write
    # goes ahead after WRITER_MAX_WAIT_S.
    MergeIntents(people.repo.store).declare("main", lease_s=3600)
    _add(people, "Dan")
    assert sum(clock.sleeps) == pytest.approx(WRITER_MAX_WAIT_S)
    assert "Dan" in _names(people)


def test_optimize_waits_for_a_live_intent(people: gl.Graph, clock: FakeTime) -> None:
    _add(people, "Dan")  # a second fragment: optimize has work to do
    intents = MergeIntents(people.repo.store)
    intent = intents.declare("main")
    clock.on_sleep = lambda: intents.release(intent)
    people.optimize()
    assert len(clock.sleeps) == 1


def test_stray_objects_in_the_intents_folder_are_ignored(people: gl.Graph, clock: FakeTime) -> None:
    intents = MergeIntents(people.repo.store)
    folder = intents.declare("main", lease_s=-1).key.rsplit("/", 1)[0]
    people.repo.store.put(f"{folder}/notes.txt", b"hello")
    _add(people, "Dan")
    assert clock.sleeps == []
    assert intents.list("main") == []


# --- the merge side ---------------------------------------------------------------------


def _merge_sees(
    monkeypatch: pytest.MonkeyPatch, g: gl.Graph, losses: int, then: Callable[..., Any]
) -> list[list[str]]:
    """Make each merge attempt record the intents on main; the first `losses` attempts
    lose the race, the next one runs `then`."""
    seen: list[list[str]] = []
    real = engine._merge_once

    def attempt(*args: Any) -> Any:
        seen.append([i.key for i in MergeIntents(g.repo.store).list("main")])
        if len(seen) <= losses:
            raise gl.ConcurrentWriteError("lost the race")
        return then(real, *args)

    monkeypatch.setattr(engine, "_merge_once", attempt)
    return seen


def _feature(g: gl.Graph) -> None:
    """A branch `feat` and a main that moved since: merging it is a real merge."""
    g.create_branch("feat")
    _add(g, "Dan", branch="feat")
    _add(g, "Eve")


def test_a_merge_declares_its_intent_after_a_lost_race_renews_and_releases_it(
    people: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    _feature(people)
    seen = _merge_sees(monkeypatch, people, 2, lambda real, *a: real(*a))
    result = people.merge("feat", into="main")
    assert result.outcome == "merged"
    assert seen[0] == []  # the first attempt is optimistic: no intent
    assert len(seen[1]) == len(seen[2]) == 1  # held from the first lost race on
    assert seen[1] != seen[2]  # renewed: a new lease after each lost race
    assert MergeIntents(people.repo.store).list("main") == []
    assert "Dan" in _names(people)


def test_a_merge_that_raises_releases_its_intent(
    people: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    _feature(people)

    def fail(real: Any, *args: Any) -> Any:
        raise gl.MergeError("boom")

    seen = _merge_sees(monkeypatch, people, 1, fail)
    with pytest.raises(gl.MergeError, match="boom"):
        people.merge("feat", into="main")
    assert len(seen[1]) == 1
    assert MergeIntents(people.repo.store).list("main") == []
    assert "Dan" not in _names(people)


def test_a_merge_that_gives_up_releases_its_intent(
    people: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    _feature(people)
    monkeypatch.setattr(engine, "MAX_WAIT_S", 0.001)
    seen = _merge_sees(monkeypatch, people, engine.MAX_ATTEMPTS, lambda real, *a: real(*a))
    with pytest.raises(gl.ConcurrentWriteError, match="gave up"):
        people.merge("feat", into="main")
    assert len(seen) == engine.MAX_ATTEMPTS
    assert MergeIntents(people.repo.store).list("main") == []


def test_a_merge_that_wins_at_once_declares_nothing(
    people: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    _feature(people)
    declared: list[str] = []
    real_declare = MergeIntents.declare
    monkeypatch.setattr(
        MergeIntents,
        "declare",
        lambda self, *a, **k: declared.append("x") or real_declare(self, *a, **k),
    )
    assert people.merge("feat", into="main").outcome == "merged"
    assert declared == []


def test_gc_removes_expired_intents_only_and_fsck_ignores_them(
    people: gl.Graph, clock: FakeTime
) -> None:
    people.create_branch("dev")
    intents = MergeIntents(people.repo.store)
    intents.declare("dev")  # a killed merger's, about to expire
    live = intents.declare("main", lease_s=3600)
    clock.advance(LEASE_S + 0.01)
    assert not people.fsck().problems  # a stale intent is not corruption
    people.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    assert intents.list("dev") == []
    assert intents.list("main") == [live]
