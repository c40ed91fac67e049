"""Revert and cherry-pick as merge-engine applications: what they publish, their
outcomes and meta, merge commits with `mainline`, schema changes, dry runs, strategies
and the typed errors that change nothing (the rows are checked against Dolt in
test_dolt_revert_pick.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.authors import Author
from graphlake.errors import (
    ApplyCommitError,
    MergeConflictError,
    NotABranchError,
    UnknownRevisionError,
)

SCHEMA = "node Person { name: String @key\n age: I32? }\n"


def ages(g: gl.Graph, branch: str = "main") -> dict[str, int | None]:
    return {r["name"]: r["age"] for r in g.nodes("Person", branch=branch).to_pylist()}


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    graph = gl.Graph.init(tmp_path / "g", SCHEMA)
    with graph.write(message="c1") as w:
        w.insert("Person", [{"name": "a", "age": 1}, {"name": "b", "age": 2}])
    return graph


def test_revert_undoes_one_commit_and_keeps_later_changes(g: gl.Graph) -> None:
    with g.write(message="bad ingest") as w:
        w.update("Person", [{"name": "a", "age": 100}])
        w.insert("Person", [{"name": "junk", "age": 0}])
    bad = g.head()
    with g.write(message="later") as w:
        w.update("Person", [{"name": "b", "age": 3}])
    result = g.revert(bad.id, author="Fixer")
    head = g.head()
    assert result.outcome == "merged" and result.commit == head.id
    assert head.parents == (head.parents[0],) and head.meta["reverted"] == bad.id
    assert head.message.startswith(f"revert {bad.id[:12]}") and head.author == Author("Fixer")
    assert ages(g) == {"a": 1, "b": 3}
    g.revert("main")  # reverting the revert brings the change back
    assert ages(g) == {"a": 100, "b": 3, "junk": 0}


def test_a_row_changed_since_is_a_conflict_and_nothing_changes(g: gl.Graph) -> None:
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 10}])
    changed = g.head().id
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 11}])
    before = g.head().id
    dry = g.revert(changed, dry_run=True)
    assert dry.outcome == "conflict" and dry.conflicts[0].entity_id == "a"
    with pytest.raises(MergeConflictError):
        g.revert(changed)
    assert g.head().id == before
    assert g.revert(changed, strategy="theirs").outcome == "merged"
    assert ages(g)["a"] == 1


def test_cherry_pick_applies_one_commit_and_records_it(g: gl.Graph) -> None:
    g.create_branch("dev")
    with g.write("dev", message="one") as w:
        w.update("Person", [{"name": "a", "age": 5}])
    one = g.head("dev").id
    with g.write("dev", message="two") as w:
        w.update("Person", [{"name": "b", "age": 6}])
    dry = g.cherry_pick("dev", dry_run=True)
    assert dry.outcome == "merged" and dry.commit is None and ages(g) == {"a": 1, "b": 2}
    result = g.cherry_pick("dev")
    assert g.head().meta["cherry_picked_from"] == g.head("dev").id
    assert result.commit == g.head().id and ages(g) == {"a": 1, "b": 6}
    assert g.cherry_pick("dev").outcome == "already_up_to_date"  # its changes are there
    g.merge("dev")
    assert g.cherry_pick(one).outcome == "already_up_to_date"  # main contains it now


def test_merge_commits_take_a_mainline(g: gl.Graph) -> None:
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Person", [{"name": "a", "age": 7}])
    with g.write() as w:
        w.update("Person", [{"name": "b", "age": 8}])
    merge = g.merge("dev").commit
    assert merge is not None
    with pytest.raises(ApplyCommitError, match="out of range"):
        g.revert(merge, mainline=3)
    g.revert(merge)  # against parent 1 (main): undoes what dev brought
    assert ages(g) == {"a": 1, "b": 8}
    g.revert(merge, mainline=2, strategy="ours")  # against dev: undoes main's own change
    assert ages(g)["b"] == 2


def test_typed_errors_change_nothing(g: gl.Graph) -> None:
    root = g.log()[-1].id
    head = g.head().id
    g.tag("v1")
    with pytest.raises(ApplyCommitError, match="root commit"):
        g.revert(root)
    with pytest.raises(ApplyCommitError, match="not a merge"):
        g.revert("main", mainline=1)
    with pytest.raises(UnknownRevisionError):
        g.cherry_pick("nope")
    with pytest.raises(NotABranchError):
        g.revert("main", branch="v1")
    with pytest.raises(gl.MergeError, match="unknown strategy"):
        g.revert("main", strategy="mine")
    assert g.head().id == head


def test_a_schema_change_is_reverted_too(g: gl.Graph) -> None:
    g.apply_schema(SCHEMA.replace("age: I32?", "age: I32?\n nick: String?"))
    added = g.head().id
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 9}])
    g.revert(added)
    assert "nick" not in g.schema_at("main").table("Person").properties
    assert ages(g) == {"a": 9, "b": 2}


def test_reverting_an_added_property_with_values_since_is_a_conflict(g: gl.Graph) -> None:
    g.apply_schema(SCHEMA.replace("age: I32?", "age: I32?\n nick: String?"))
    added = g.head().id
    with g.write() as w:
        w.update("Person", [{"name": "a", "nick": "x"}])
    head = g.head().id
    with pytest.raises(MergeConflictError) as caught:
        g.revert(added)
    assert [(c.kind, c.entity_id, c.properties) for c in caught.value.conflicts] == [
        ("schema_conflict", "a", ("nick",))
    ]
    assert g.head().id == head
    g.revert(added, strategy="theirs")  # told to: the property and its values go
    assert "nick" not in g.schema_at("main").table("Person").properties
