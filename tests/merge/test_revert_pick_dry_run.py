"""Revert and cherry-pick dry runs leave nothing in the graph root (issue 23): across
schemas they evolve tables on forks of their own (storage/scratch.py), like a merge dry
run, and those forks and the merged schema are gone when the dry run ends. The root's
listing (every object, its size and modification time) and each table's Lance branches
are the same before and after."""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.maintenance.test_gc import lance_branches, objects

S1 = "node Person { name: String @key\n age: I32? }\n"
S2 = "node Person { name: String @key\n age: I32?\n email: String? }\n"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> tuple[gl.Graph, str, str]:
    """main: rows, a commit `w` (S1), then S2 and an email; dev: a commit `x` (S1)."""
    g = gl.Graph.init(tmp_path_factory.mktemp("dry") / "g", S1)
    with g.write(message="rows") as w:
        w.insert("Person", [{"name": "A", "age": 1}, {"name": "B", "age": 2}])
    g.create_branch("dev")
    with g.write("dev", message="x") as w:
        w.update("Person", [{"name": "A", "age": 10}])
    x = g.head("dev").id
    with g.write(message="w") as w:
        w.update("Person", [{"name": "B", "age": 20}])
    w_id = g.head("main").id
    g.apply_schema(S2, message="add email")
    with g.write(message="email") as w:
        w.update("Person", [{"name": "A", "email": "a@x"}])
    return g, x, w_id


def _unchanged(g: gl.Graph, dry_run) -> object:  # type: ignore[no-untyped-def]
    tid = g.head("main").tables["Person"].table_id
    files, branches, head = objects(g), lance_branches(g, tid), g.head("main").id
    result = dry_run()
    assert objects(g) == files  # not one object added, changed or removed
    assert lance_branches(g, tid) == branches
    assert g.head("main").id == head
    return result


def test_a_cherry_pick_dry_run_across_schemas_leaves_nothing(graph) -> None:  # type: ignore[no-untyped-def]
    g, x, _ = graph
    result = _unchanged(g, lambda: g.cherry_pick(x, "main", dry_run=True))
    assert result.outcome == "merged" and result.commit is None and not result.conflicts


def test_a_revert_dry_run_across_schemas_leaves_nothing(graph) -> None:  # type: ignore[no-untyped-def]
    g, _, w_id = graph
    result = _unchanged(g, lambda: g.revert(w_id, "main", dry_run=True))
    assert result.outcome == "merged" and result.commit is None and not result.conflicts


def test_the_real_runs_then_apply(graph) -> None:  # type: ignore[no-untyped-def]
    g, x, w_id = graph
    g.cherry_pick(x, "main")
    g.revert(w_id, "main")
    rows = {r["name"]: r for r in g.nodes("Person").to_pylist()}
    assert rows["A"]["age"] == 10 and rows["A"]["email"] == "a@x" and rows["B"]["age"] == 2
