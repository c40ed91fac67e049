"""merge_many with sources that forked from (or merged) different commits of the target.

Found by tests/core/test_concurrency_stress.py: one common base for every source made a
source that forked later carry the target's own changes made between that base and its
fork point as if they were its own; where the target changed those rows again since, the
merge reported a spurious conflict, or undid the target's change (a row the target
inserted and then deleted came back). merge_many then refused such sources. Now each
source is merged against its own base (issue 12): the result equals merging the sources
one by one, in ONE commit whose parents are the target and every source; a key two
sources with different bases changed differently is a conflict between them, never
resolved by a strategy.
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


def _people(g: gl.Graph, branch: str = "main") -> set[str]:
    return {r["id"] for r in g.snapshot(branch).read("Person").to_pylist()}


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")], ids=["a-b", "b-a"])
@pytest.mark.parametrize(
    ("between", "after", "bob_age"),
    [
        pytest.param(
            lambda w: w.update("Person", [{"name": "Bob", "age": 41}]),
            lambda w: w.update("Person", [{"name": "Bob", "age": 42}]),
            42,
            id="target-updated-a-row-twice",
        ),
        pytest.param(
            lambda w: w.insert("Person", [{"name": "Temp"}]),
            lambda w: w.delete("Person", ["Temp"]),
            40,
            id="target-deleted-a-row-it-added",
        ),
    ],
)
def test_a_later_fork_merges_in_one_commit_as_one_by_one_would(
    people: gl.Graph, between, after, bob_age: int, order: tuple[str, str]
) -> None:
    g = people
    _fork_a_then_b(g, between, after)
    g.create_branch("one-by-one")
    for source in order:
        g.merge(source, into="one-by-one")
    target = g.head("main").id
    heads = {n: g.head(n).id for n in order}
    dry = g.merge_many(list(order), dry_run=True)
    assert dry.outcome == "merged" and g.head("main").id == target
    result = g.merge_many(list(order))
    assert result.outcome == "merged"
    assert g.head("main").parents == (target, *(heads[n] for n in order))
    bases = list(g.head("main").meta["source_bases"])  # each source's own base, recorded
    assert bases == [g.repo.history.merge_bases(target, heads[n])[0] for n in order]
    assert len(set(bases)) == 2
    assert g.get("Person", "Temp") is None
    assert g.get("Person", "Bob")["age"] == bob_age
    assert {"FromA", "FromB"} <= _people(g)
    assert {k: v for k, v in state(g).items() if k != "head"} == {
        k: v for k, v in state(g, "one-by-one").items() if k != "head"
    }


def test_a_source_containing_the_target_head_takes_its_own_base(people: gl.Graph) -> None:
    """c forked after the target updated Bob and then changed Bob again: against c's own
    base (the target's head) that is c's change alone, not a clash with the target (one
    base for all, the older fork point, reported divergent_update here)."""
    g = people
    g.create_branch("a")
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.create_branch("c")
    with g.write("c") as w:
        w.update("Person", [{"name": "Bob", "age": 50}])
    with g.write("a") as w:
        w.insert("Person", [{"name": "FromA"}])
    result = g.merge_many(["a", "c"])
    assert result.outcome == "merged"
    assert g.get("Person", "Bob")["age"] == 50
    assert "FromA" in _people(g)


@pytest.mark.parametrize("strategy", [None, "ours", "theirs"])
def test_sources_with_different_bases_changing_a_key_differently_conflict(
    people: gl.Graph, strategy: str | None
) -> None:
    g = people
    g.create_branch("a")
    with g.write() as w:
        w.insert("Person", [{"name": "Dan"}])
    g.create_branch("b")
    with g.write("a") as w:
        w.update("Person", [{"name": "Carol", "age": 7}])
    with g.write("b") as w:
        w.update("Person", [{"name": "Carol", "age": 8}])
    before = state(g)
    dry = g.merge_many(["a", "b"], strategy=strategy, dry_run=True)
    assert dry.outcome == "conflict"
    assert [(c.kind, c.table, c.entity_id) for c in dry.conflicts] == [
        ("divergent_update", "Person", "Carol")
    ]
    assert "different commits" in dry.conflicts[0].message
    assert not dry.resolved
    with pytest.raises(gl.MergeConflictError) as exc:
        g.merge_many(["a", "b"], strategy=strategy)
    assert [c.entity_id for c in exc.value.conflicts] == ["Carol"]
    assert state(g) == before


def test_a_delete_against_an_update_from_another_base_conflicts(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    with g.write() as w:
        w.insert("Person", [{"name": "Dan"}])
    g.create_branch("b")
    with g.write("a") as w:
        w.delete("Person", ["Carol"], cascade=True)
    with g.write("b") as w:
        w.update("Person", [{"name": "Carol", "age": 8}])
    with pytest.raises(gl.MergeConflictError) as exc:
        g.merge_many(["a", "b"])
    assert {(c.kind, c.entity_id) for c in exc.value.conflicts} == {("delete_vs_update", "Carol")}


def test_equal_rows_from_different_bases_converge(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.create_branch("b")
    for name in ("a", "b"):  # the same row; b saw the target's 41, a did not
        with g.write(name) as w:
            w.update("Person", [{"name": "Bob", "age": 43}])
    assert g.merge_many(["a", "b"]).outcome == "merged"
    assert g.get("Person", "Bob")["age"] == 43


def test_strict_disjoint_refuses_a_key_two_sources_with_different_bases_touched(
    people: gl.Graph,
) -> None:
    g = people
    g.create_branch("a")
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.create_branch("b")
    for name in ("a", "b"):
        with g.write(name) as w:
            w.insert("Person", [{"name": "Same"}])
    before = state(g)
    with pytest.raises(gl.MergeError, match="strict_disjoint"):
        g.merge_many(["a", "b"], strict_disjoint=True)
    assert state(g) == before
    assert g.merge_many(["a", "b"]).outcome == "merged"  # identical rows converge


def test_insert_only_shards_from_different_commits_are_adopted(people: gl.Graph) -> None:
    g = people
    g.create_branch("w0")
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.create_branch("w1")
    with g.write() as w:
        w.delete("Person", ["Carol"], cascade=True)
    for i, name in enumerate(("w0", "w1")):
        with g.write(name) as w:
            w.insert("Person", [{"name": f"P{i}-{n}"} for n in range(5)])
    result = g.merge_many(["w0", "w1"], strict_disjoint=True)
    assert result.routes["Person"] == "insertion_replay"
    assert result.stats["Person"].adopted_rows == 10
    assert result.stats["Person"].effects == 0  # nothing copied
    assert g.get("Person", "Carol") is None and g.get("Person", "Bob")["age"] == 41
    assert {f"P{i}-{n}" for i in range(2) for n in range(5)} <= _people(g)


def test_a_source_that_merged_a_later_target_commit(people: gl.Graph) -> None:
    """b forked with a, then merged the target's later commit (it deleted Temp); the
    target changed Bob again after that. b's base is the commit it merged."""
    g = people
    with g.write() as w:
        w.insert("Person", [{"name": "Temp"}])
    g.create_branch("a")
    g.create_branch("b")
    with g.write("b") as w:
        w.insert("Person", [{"name": "FromB"}])
    with g.write() as w:
        w.delete("Person", ["Temp"])
        w.update("Person", [{"name": "Bob", "age": 41}])
    g.merge("main", into="b")
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 42}])
        w.insert("Person", [{"name": "Temp"}])  # back again, after b's sync
    with g.write("a") as w:
        w.insert("Person", [{"name": "FromA"}])
    g.merge_many(["a", "b"])
    assert g.get("Person", "Bob")["age"] == 42
    assert g.get("Person", "Temp") is not None
    assert {"FromA", "FromB"} <= _people(g)


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
    assert {"Froma", "Fromb", "Fromc"} <= _people(g)


def test_a_criss_cross_source_and_a_later_fork(people: gl.Graph) -> None:
    """a and main merged each other's earlier commits (two best common ancestors: a
    virtual base); b forked later, after main inserted Temp, which main then deleted.
    One commit, the same rows as merging a then b one by one; Temp stays deleted."""
    g = people
    with g.write("main") as w:
        w.update("Person", [{"name": "Carol", "age": 30}])
    g.create_branch("a")
    with g.write("a") as w:
        w.insert("Person", [{"name": "A1"}])
    g.create_branch("a1", from_="a")
    with g.write() as w:
        w.insert("Person", [{"name": "T1"}])
    g.create_branch("t1")
    g.merge("t1", into="a")
    g.merge("a1", into="main")
    with g.write("a") as w:
        w.update("Person", [{"name": "Carol", "age": 31}])
    with g.write() as w:
        w.insert("Person", [{"name": "Temp"}])
    g.create_branch("b")
    with g.write() as w:
        w.delete("Person", ["Temp"])
    with g.write("b") as w:
        w.insert("Person", [{"name": "FromB"}])
    g.create_branch("one-by-one")
    for source in ("a", "b"):
        g.merge(source, into="one-by-one")
    target = g.head("main").id
    assert len(g.repo.history.merge_bases(target, g.head("a").id)) == 2  # criss-cross
    g.merge_many(["a", "b"])
    assert g.head("main").parents == (target, g.head("a").id, g.head("b").id)
    assert g.get("Person", "Temp") is None and g.get("Person", "Carol")["age"] == 31
    assert {k: v for k, v in state(g).items() if k != "head"} == {
        k: v for k, v in state(g, "one-by-one").items() if k != "head"
    }
