"""A source with commits the target lacks is merged (and recorded) even when the sides
converge: `already_up_to_date` only when the source's head is an ancestor of the target.

Skipping the record of a converging merge loses it from history: the next merge then
uses an older base, re-decides the converged changes against the target's later ones,
and raises false conflicts or silently undoes the target's own later change.
"""

from __future__ import annotations

import graphlake as gl

SCHEMA = "node Person { name: String @key  age: I32?  b: String? }"


def _graph(tmp_path) -> gl.Graph:
    g = gl.Graph.init(str(tmp_path / "g"), SCHEMA)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": "Alice", "age": 30}, {"name": "Bob", "age": 25}])
    g.create_branch("feature")
    return g


def _update(g: gl.Graph, branch: str, row: dict) -> None:
    with g.write(branch) as w:
        w.update("Person", [row])


def test_equal_updates_are_recorded_and_no_false_conflict_follows(tmp_path) -> None:
    g = _graph(tmp_path)
    for b in ("feature", "main"):
        _update(g, b, {"name": "Alice", "age": 31})
    r = g.merge("feature", into="main")
    assert r.outcome == "merged"
    head = g.head("main")
    assert r.commit == head.id and head.parents[1] == g.head("feature").id
    assert g.repo.history.is_ancestor(g.head("feature").id, head.id)
    _update(g, "main", {"name": "Alice", "age": 35})
    assert g.merge("feature", into="main").outcome == "already_up_to_date"
    assert g.get("Person", "Alice")["age"] == 35


def test_targets_later_change_is_not_undone(tmp_path) -> None:
    g = _graph(tmp_path)
    for b in ("feature", "main"):
        _update(g, b, {"name": "Alice", "b": "y"})
    assert g.merge("feature", into="main").outcome == "merged"
    _update(g, "main", {"name": "Alice", "b": None})
    assert g.merge("feature", into="main").outcome == "already_up_to_date"
    assert g.get("Person", "Alice")["b"] is None


def test_merging_back_after_a_converging_merge_fast_forwards(tmp_path) -> None:
    g = _graph(tmp_path)
    for b in ("feature", "main"):
        _update(g, b, {"name": "Alice", "age": 31})
    g.merge("feature", into="main")
    r = g.merge("main", into="feature")
    assert r.outcome == "fast_forward"
    assert g.head("feature").id == g.head("main").id


def test_both_sides_delete_is_recorded(tmp_path) -> None:
    g = _graph(tmp_path)
    for b in ("feature", "main"):
        with g.write(b) as w:
            w.delete("Person", ["Alice"])
    r = g.merge("feature", into="main")
    assert r.outcome == "merged"
    assert g.head("main").parents == (
        r.commit and g.repo.commits.get(r.commit).parents[0],
        g.head("feature").id,
    )
    assert g.get("Person", "Alice") is None


def test_a_source_whose_commits_net_to_nothing_is_recorded(tmp_path) -> None:
    g = _graph(tmp_path)
    _update(g, "feature", {"name": "Bob", "age": 26})
    _update(g, "feature", {"name": "Bob", "age": 25})
    _update(g, "main", {"name": "Alice", "age": 40})
    before = g.nodes("Person").sort_by("id")
    r = g.merge("feature", into="main")
    assert r.outcome == "merged"
    assert g.head("main").parents[1] == g.head("feature").id
    assert g.nodes("Person").sort_by("id") == before
    assert g.merge("feature", into="main").outcome == "already_up_to_date"


def test_dry_run_of_a_converging_merge_says_merged_and_writes_nothing(tmp_path) -> None:
    g = _graph(tmp_path)
    for b in ("feature", "main"):
        _update(g, b, {"name": "Alice", "age": 31})
    head = g.head("main").id
    r = g.merge("feature", into="main", dry_run=True)
    assert r.outcome == "merged" and r.commit is None
    assert g.head("main").id == head


def test_merge_many_records_converging_sources_and_skips_contained_ones(tmp_path) -> None:
    g = _graph(tmp_path)
    g.create_branch("same")
    g.create_branch("contained")
    _update(g, "feature", {"name": "Alice", "age": 31})
    _update(g, "same", {"name": "Alice", "age": 31})
    _update(g, "main", {"name": "Alice", "age": 31})
    r = g.merge_many(["feature", "same", "contained"], into="main")
    assert r.outcome == "merged"
    head = g.head("main")
    assert head.parents[1:] == (g.head("feature").id, g.head("same").id)
    assert g.merge_many(["feature", "same", "contained"], into="main").outcome == (
        "already_up_to_date"
    )
