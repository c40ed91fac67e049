"""Merge behaviour beyond the truth table: history shapes, routes, strategies, validation."""

from __future__ import annotations

import multiprocessing as mp

import pytest

import graphlake as gl
from graphlake.catalog.commits import Commit
from tests.conftest import state


def ids(g: gl.Graph, table: str = "Person", branch: str = "main") -> set[str]:
    return set(g.nodes(table, branch=branch, columns=["id"]).column("id").to_pylist())


def write(g: gl.Graph, branch: str, fn) -> None:
    with g.write(branch) as w:
        fn(w)


def test_repeated_merges_both_directions(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.update("Person", [{"name": "Alice", "age": 31}]))
    write(g, "main", lambda w: w.update("Person", [{"name": "Bob", "age": 41}]))
    assert g.merge("dev", into="main").outcome == "merged"
    assert g.merge("main", into="dev").outcome == "fast_forward"
    # Both sides now hold Alice=31; changing it again on one side is no conflict.
    write(g, "dev", lambda w: w.update("Person", [{"name": "Alice", "age": 32}]))
    write(g, "main", lambda w: w.update("Person", [{"name": "Carol", "age": 7}]))
    assert g.merge("dev", into="main").outcome == "merged"
    write(g, "main", lambda w: w.update("Person", [{"name": "Alice", "age": 33}]))
    write(g, "dev", lambda w: w.insert("Person", [{"name": "Dev"}]))
    assert g.merge("main", into="dev").outcome == "merged"
    assert g.merge("dev", into="main").outcome == "fast_forward"
    assert g.get("Person", "Alice")["age"] == 33
    assert g.get("Person", "Bob")["age"] == 41
    assert "Dev" in ids(g)
    assert state(g, "main")["Person"] == state(g, "dev")["Person"]


def test_criss_cross_uses_a_virtual_base(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    g.create_branch("b")
    write(g, "a", lambda w: w.update("Person", [{"name": "Alice", "age": 1}]))
    write(g, "b", lambda w: w.update("Person", [{"name": "Bob", "age": 2}]))
    a1, b1 = g.head("a").id, g.head("b").id
    # Criss-cross: each side merges the other's previous head.
    g.create_branch("b1", from_=b1)
    g.create_branch("a1", from_=a1)
    assert g.merge("b1", into="a").outcome == "merged"
    assert g.merge("a1", into="b").outcome == "merged"
    assert len(g.repo.history.merge_bases(g.head("a").id, g.head("b").id)) == 2
    # Later, a changes Bob again (on top of b's change); b changes Carol.
    write(g, "a", lambda w: w.update("Person", [{"name": "Bob", "age": 3}]))
    write(g, "b", lambda w: w.update("Person", [{"name": "Carol", "age": 4}]))
    result = g.merge("b", into="a")
    assert result.outcome == "merged"
    got = {r["id"]: r["age"] for r in g.nodes("Person", branch="a").to_pylist()}
    assert got == {"Alice": 1, "Bob": 3, "Carol": 4}


def test_criss_cross_with_different_resolutions_conflicts(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    g.create_branch("b")
    write(g, "a", lambda w: w.update("Person", [{"name": "Alice", "age": 1}]))
    write(g, "b", lambda w: w.update("Person", [{"name": "Alice", "age": 2}]))
    g.create_branch("a1", from_=g.head("a").id)
    g.create_branch("b1", from_=g.head("b").id)
    g.merge("b1", into="a", strategy="ours")  # a keeps 1
    g.merge("a1", into="b", strategy="ours")  # b keeps 2
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("b", into="a")
    assert [c.kind for c in err.value.conflicts] == ["divergent_update"]


def test_routes_and_pointer_adoption_copies_no_rows(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.insert("Company", [{"name": "Beta"}]))  # only dev touches
    write(g, "dev", lambda w: w.insert("Person", [{"name": "Dan"}]))  # insert-only
    write(g, "main", lambda w: w.insert("Person", [{"name": "Eve"}]))  # target touched
    write(g, "dev", lambda w: w.update("Knows", [{"id": "k1", "since": "2001-01-01"}]))
    write(g, "main", lambda w: w.insert("Knows", [{"id": "k3", "src": "Carol", "dst": "Alice"}]))
    result = g.merge("dev", into="main")
    assert result.routes == {
        "Person": "insertion_replay",
        "Company": "pointer_adoption",
        "Knows": "three_way",
        "WorksAt": "no_change",
    }
    assert g.head("main").tables["Company"] == g.head("dev").tables["Company"]
    assert result.stats["Company"].effects == 0
    # dev forked Person at exactly the base: its new row joins by reference, not a copy.
    person = result.stats["Person"]
    assert (person.effects, person.adopted_rows) == (0, 1)
    assert ids(g) == {"Alice", "Bob", "Carol", "Dan", "Eve"}
    assert ids(g, "Company") == {"Acme", "Beta"}
    # The target writes to an adopted table on a fork of its own; dev is unaffected.
    write(g, "main", lambda w: w.insert("Company", [{"name": "Gamma"}]))
    assert ids(g, "Company", "dev") == {"Acme", "Beta"}
    assert g.head("main").tables["Company"].owner != g.head("dev").tables["Company"].owner


def test_deleting_merged_branch_leaves_target_readable(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.insert("Company", [{"name": "Beta"}]))
    assert g.merge("dev", into="main").outcome == "fast_forward"
    g.delete_branch("dev")
    assert ids(g, "Company") == {"Acme", "Beta"}
    write(g, "main", lambda w: w.insert("Company", [{"name": "Gamma"}]))
    assert ids(g, "Company") == {"Acme", "Beta", "Gamma"}


def test_equal_changes_converge(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    for b in ("dev", "main"):
        write(g, b, lambda w: w.insert("Person", [{"name": "Same", "age": 5}]))
        write(g, b, lambda w: w.update("Person", [{"name": "Alice", "age": 50}]))
    # Converged, yet recorded: dev's head joins main's history.
    assert g.merge("dev", into="main").outcome == "merged"
    assert g.head().parents[1] == g.head("dev").id
    assert g.merge("dev", into="main").outcome == "already_up_to_date"
    assert g.get("Person", "Same")["age"] == 5


@pytest.mark.parametrize(("strategy", "age", "carol"), [("ours", 2, None), ("theirs", 1, 9)])
def test_strategies_resolve_data_conflicts(people: gl.Graph, strategy, age, carol) -> None:
    g = people
    g.create_branch("dev")
    write(
        g,
        "dev",
        lambda w: (
            w.update("Person", [{"name": "Alice", "age": 1, "role": "pm"}]),
            w.update("Person", [{"name": "Carol", "age": 9}]),
        ),
    )
    write(
        g,
        "main",
        lambda w: (
            w.update("Person", [{"name": "Alice", "age": 2}]),
            w.delete("Person", ["Carol"], cascade=True),
        ),
    )
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("dev", into="main")
    assert sorted(c.kind for c in err.value.conflicts) == ["delete_vs_update", "divergent_update"]
    div = next(c for c in err.value.conflicts if c.kind == "divergent_update")
    assert div.properties == ("age",)
    assert (div.base["age"], div.source["age"], div.target["age"]) == (30, 1, 2)
    result = g.merge("dev", into="main", strategy=strategy)
    assert result.outcome == "merged"
    assert sorted(c.kind for c in result.resolved) == ["delete_vs_update", "divergent_update"]
    assert all(c.resolution == strategy for c in result.resolved)
    alice = g.get("Person", "Alice")
    assert alice["age"] == age and alice["role"] == "pm"  # the disjoint cell merged anyway
    got = g.get("Person", "Carol")
    assert (got["age"] if got else None) == carol


def test_unique_violation_is_never_auto_resolved(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.update("Person", [{"name": "Bob", "email": "x@y.z"}]))
    write(g, "main", lambda w: w.update("Person", [{"name": "Carol", "email": "x@y.z"}]))
    before = state(g)
    for strategy in (None, "ours", "theirs"):
        with pytest.raises(gl.MergeConflictError) as err:
            g.merge("dev", into="main", strategy=strategy)
        assert [c.kind for c in err.value.conflicts] == ["unique_violation"]
        assert state(g) == before


def test_cardinality_violation(people: gl.Graph) -> None:
    g = people
    write(g, "main", lambda w: w.insert("Company", [{"name": "B1"}, {"name": "B2"}]))
    g.create_branch("dev")
    write(g, "dev", lambda w: w.insert("WorksAt", [{"id": "x1", "src": "Bob", "dst": "B1"}]))
    write(g, "main", lambda w: w.insert("WorksAt", [{"id": "x2", "src": "Bob", "dst": "B2"}]))
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("dev", into="main")
    assert [(c.kind, c.entity_id) for c in err.value.conflicts] == [
        ("cardinality_violation", "Bob")
    ]


def test_all_conflicts_are_reported(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(
        g,
        "dev",
        lambda w: w.update("Person", [{"name": n, "age": 1} for n in ("Alice", "Bob", "Carol")]),
    )
    write(
        g,
        "main",
        lambda w: w.update("Person", [{"name": n, "age": 2} for n in ("Alice", "Bob", "Carol")]),
    )
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge("dev", into="main")
    assert sorted(c.entity_id for c in err.value.conflicts) == ["Alice", "Bob", "Carol"]


def test_dry_run_publishes_nothing(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.insert("Person", [{"name": "Dan"}]))
    write(g, "main", lambda w: w.insert("Person", [{"name": "Eve"}]))
    before = state(g)
    result = g.merge("dev", into="main", dry_run=True)
    assert result.outcome == "merged" and result.dry_run and result.commit is None
    assert result.routes["Person"] == "insertion_replay"
    assert state(g) == before
    ff = g.merge("main", into="dev", dry_run=True)
    assert ff.outcome == "merged"
    g.create_branch("later", from_="main")
    assert g.merge("later", into="main", dry_run=True).outcome == "already_up_to_date"


def test_diff(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(
        g,
        "dev",
        lambda w: (
            w.insert("Person", [{"name": "Dan"}]),
            w.update("Person", [{"name": "Alice", "age": 5, "role": "pm"}]),
            w.delete("Knows", ["k2"]),
        ),
    )
    d = g.diff("main", "dev")
    assert set(d) == {"Person", "Knows"}
    assert d["Person"].inserted == ["Dan"]
    assert d["Person"].updated == {"Alice": ["age", "role"]}
    assert d["Knows"].deleted == ["k2"]
    assert g.diff("main", "main") == {}
    back = g.diff("dev", "main")
    assert back["Person"].deleted == ["Dan"] and back["Knows"].inserted == ["k2"]


def test_bad_merge_input_changes_nothing(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    before = state(g)
    with pytest.raises(gl.BranchNotFoundError):
        g.merge("nope", into="main")
    with pytest.raises(gl.BranchNotFoundError):
        g.merge("dev", into="nope")
    with pytest.raises(gl.MergeError, match="itself"):
        g.merge("main", into="main")
    with pytest.raises(gl.MergeError, match="strategy"):
        g.merge("dev", into="main", strategy="mine")
    with pytest.raises(gl.InvalidNameError):
        g.merge("../x", into="main")
    assert state(g) == before


def test_a_source_naming_an_unknown_schema_is_a_typed_error(people: gl.Graph) -> None:
    # Different schemas merge three-way (tests/merge/test_schema_merge.py); a schema id
    # the graph does not hold cannot, and the merge changes nothing.
    g = people
    g.create_branch("other")
    ref, head = g.repo.branch_head("other")
    odd = Commit.create(
        parents=(head.id,), message="odd", schema_id="f" * 40, tables=dict(head.tables)
    )
    g.repo.commits.put(odd)
    g.repo.refs.cas("other", ref, odd.id)
    write(g, "main", lambda w: w.insert("Person", [{"name": "M"}]))
    before = state(g)
    with pytest.raises(gl.GraphLakeError, match="schema"):
        g.merge("other", into="main")
    assert state(g) == before


def _merge_worker(uri: str, options, source: str, out: mp.Queue) -> None:
    g = gl.Graph.open(uri, options)
    out.put((source, g.merge(source, into="main").outcome))


def test_concurrent_merges_into_one_target(people: gl.Graph) -> None:
    g = people
    for name in ("w1", "w2"):
        g.create_branch(name)
        write(g, name, lambda w, n=name: w.insert("Person", [{"name": f"from-{n}"}]))
    write(g, "main", lambda w: w.insert("Person", [{"name": "on-main"}]))
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()
    args = (g.uri, g.storage_options)
    procs = [ctx.Process(target=_merge_worker, args=(*args, n, q)) for n in ("w1", "w2")]
    for p in procs:
        p.start()
    outcomes = dict(q.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert outcomes == {"w1": "merged", "w2": "merged"}
    assert {"from-w1", "from-w2", "on-main", "Alice"} <= ids(g)
    assert len(g.head("main").parents) == 2


def test_resolution_that_keeps_the_target_is_recorded(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.update("Person", [{"name": "Bob", "age": 1}]))
    write(g, "main", lambda w: w.update("Person", [{"name": "Bob", "age": 2}]))
    result = g.merge("dev", into="main", strategy="ours")
    assert result.outcome == "merged" and len(result.resolved) == 1
    assert g.head().parents[1] == g.head("dev").id
    assert g.get("Person", "Bob")["age"] == 2
    assert g.merge("dev", into="main").outcome == "already_up_to_date"


def test_every_outcome_reports_its_timings(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    assert "resolve_base" in g.merge("dev", into="main").timings
    write(g, "dev", lambda w: w.insert("Person", [{"name": "D"}]))
    ff = g.merge("dev", into="main")
    assert ff.outcome == "fast_forward" and {"resolve_base", "publish"} <= set(ff.timings)


def test_uncertain_keys_are_compared_even_when_a_side_equals_the_base(people: gl.Graph) -> None:
    """A virtual base that conflicted on a key cannot arbitrate it, even when one side's
    table is physically the base's state (what an "ours" resolution leaves behind)."""
    from graphlake.merge.base import MergeBase
    from graphlake.merge.classify import MergeInputs, classify
    from graphlake.merge.run import MergeRun

    g = people
    g.create_branch("dev")
    write(g, "main", lambda w: w.update("Person", [{"name": "Alice", "age": 5}]))
    source, target = g.head("dev"), g.head("main")
    for uncertain, kinds in (({}, []), ({"Person": {"Alice"}}, ["divergent_update"])):
        base = MergeBase(source, virtual=True, uncertain=uncertain)
        cls = classify(MergeRun(g.repo), MergeInputs(base, (source,), target))
        assert [c.kind for c in cls.conflicts] == kinds
