"""optimize: fewer fragments, same content, merges and lineage unaffected."""

from __future__ import annotations

import graphlake as gl
from tests.conftest import state


def fragments(g: gl.Graph, table: str, branch: str = "main") -> int:
    return len(g.snapshot(branch).dataset(table).get_fragments())


def test_optimize_compacts_without_changing_content(people: gl.Graph) -> None:
    g = people
    for i in range(6):
        with g.write() as w:
            w.insert("Person", [{"name": f"p{i}"}])
            w.update("Person", [{"name": "Alice", "age": 30 + i}])
    before = state(g)
    assert fragments(g, "Person") > 2
    commit = g.optimize()
    after = state(g)
    assert fragments(g, "Person") == 1
    assert {k: v for k, v in after.items() if k != "head"} == {
        k: v for k, v in before.items() if k != "head"
    }
    assert commit.message == "optimize" and g.head().id == commit.id
    assert g.optimize().id == commit.id  # nothing left to do: no new commit


def test_merges_across_an_optimize_find_exactly_the_real_changes(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Person", [{"name": "Bob", "age": 1}])
        w.delete("Knows", ["k2"])
    for i in range(4):
        with g.write() as w:
            w.insert("Person", [{"name": f"m{i}"}])
    g.optimize()
    g.optimize("dev")
    result = g.merge("dev", into="main", lineage="verify")
    assert result.outcome == "merged"
    assert {s.fallback for s in result.stats.values()} == {None}
    assert g.get("Person", "Bob")["age"] == 1
    assert g.edges("Knows").column("id").to_pylist() == ["k1"]
    assert {f"m{i}" for i in range(4)} <= set(g.nodes("Person").column("id").to_pylist())
    assert g.diff("main", "dev")["Person"].inserted == []
