"""merge_many with sources that forked from different commits of the target.

Found by tests/core/test_concurrency_stress.py: merge_many merges every source against
ONE common base (the newest commit all heads share). A source that forked later carries
the target's own changes made between that base and its fork point as if they were its
own; if the target changed those rows again since, the merge reported a spurious
conflict, or silently undid the target's change (a row the target inserted and then
deleted came back). Until merges take a base per source, merge_many refuses such a
source with a typed error and changes nothing; merging it on its own is correct.
"""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.conftest import state


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


@pytest.mark.parametrize(("between", "after", "bob_age"), [
    pytest.param(lambda w: w.update("Person", [{"name": "Bob", "age": 41}]),
                 lambda w: w.update("Person", [{"name": "Bob", "age": 42}]), 42,
                 id="target-updated-a-row-twice"),
    pytest.param(lambda w: w.insert("Person", [{"name": "Temp"}]),
                 lambda w: w.delete("Person", ["Temp"]), 40,
                 id="target-deleted-a-row-it-added"),
])
def test_a_later_fork_is_refused_and_merging_one_by_one_is_right(
    people: gl.Graph, between, after, bob_age: int
) -> None:
    g = people
    _fork_a_then_b(g, between, after)
    before = state(g)
    with pytest.raises(gl.MergeError, match="'b' saw more of 'main'"):
        g.merge_many(["a", "b"])
    with pytest.raises(gl.MergeError, match="'b' saw more"):
        g.merge_many(["a", "b"], dry_run=True)
    assert state(g) == before
    for source in ("a", "b"):
        g.merge(source, into="main")
    assert g.get("Person", "Temp") is None
    assert g.get("Person", "Bob")["age"] == bob_age
    assert {"FromA", "FromB"} <= {r["id"] for r in g.nodes("Person").to_pylist()}


def test_sources_from_one_commit_and_a_source_containing_the_target_are_fine(
    people: gl.Graph,
) -> None:
    g = people
    g.create_branch("a")
    g.create_branch("b")
    with g.write() as w:  # the target moves after both forked: one base serves both
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.create_branch("c")  # c contains the target's head: nothing to replay
    for name in ("a", "b", "c"):
        with g.write(name) as w:
            w.insert("Person", [{"name": f"From{name}"}])
    result = g.merge_many(["a", "b", "c"])
    assert result.outcome == "merged"
    assert g.get("Person", "Bob")["age"] == 41
    assert {"Froma", "Fromb", "Fromc"} <= {r["id"] for r in g.nodes("Person").to_pylist()}
