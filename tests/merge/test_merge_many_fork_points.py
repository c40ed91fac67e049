"""merge_many with sources that forked from different commits of the target.

Found by tests/core/test_concurrency_stress.py: merge_many merges every source against
ONE common base (the oldest fork point). A source that forked later carries the target's
own changes made between that base and its fork point, and they look like the source's
changes. If the target changed those rows again since, the merge reports a spurious
conflict; if it changed them back (or deleted a row it had inserted), the merge silently
undoes the target's change. Merging the same sources one by one is correct; so merge_many
must give the same result (e.g. a base per source, or not counting changes the target's
own history already holds).
"""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.conftest import state

REASON = ("merge_many uses one base for all sources: a source forked later replays the "
          "target's own older changes as its own (spurious conflicts, undone target changes)")


def _merged_one_by_one(g: gl.Graph, sources: list[str]) -> dict:
    g.create_branch("sequential", from_="main")
    for s in sources:
        g.merge(s, into="sequential")
    return state(g, "sequential")


def _fork_a_then_b(g: gl.Graph, between, after) -> None:
    g.create_branch("a")
    with g.write(message="between") as w:
        between(w)
    g.create_branch("b")
    with g.write(message="after") as w:
        after(w)
    with g.write("a", message="a") as w:
        w.insert("Person", [{"name": "FromA"}])
    with g.write("b", message="b") as w:
        w.insert("Person", [{"name": "FromB"}])


def _rows(s: dict) -> dict:
    return {k: v for k, v in s.items() if k != "head"}


@pytest.mark.xfail(strict=True, reason=REASON)
def test_target_updated_a_row_twice_no_spurious_conflict(people: gl.Graph) -> None:
    g = people
    _fork_a_then_b(
        g,
        lambda w: w.update("Person", [{"name": "Bob", "age": 41}]),
        lambda w: w.update("Person", [{"name": "Bob", "age": 42}]),
    )
    expected = _merged_one_by_one(g, ["a", "b"])
    g.merge_many(["a", "b"])  # raises MergeConflictError (divergent_update on Bob)
    assert _rows(state(g)) == _rows(expected)


@pytest.mark.xfail(strict=True, reason=REASON)
def test_target_deleted_a_row_it_added_stays_deleted(people: gl.Graph) -> None:
    g = people
    _fork_a_then_b(
        g,
        lambda w: w.insert("Person", [{"name": "Temp"}]),
        lambda w: w.delete("Person", ["Temp"]),
    )
    expected = _merged_one_by_one(g, ["a", "b"])
    assert g.get("Person", "Temp", branch="sequential") is None
    g.merge_many(["a", "b"])
    assert g.get("Person", "Temp") is None, "merge_many resurrected a row main deleted"
    assert _rows(state(g)) == _rows(expected)
