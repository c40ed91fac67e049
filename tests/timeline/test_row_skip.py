"""Row history and blame skip the commits that cannot have changed the row (Lance row
version metadata, `timeline.skip`) and stay exact: on a history with Lance branch forks,
a merge, a fast-forward, a delete and re-insert, a compaction, a no-op update and a
schema change, they
agree with a replay of every commit, and they read far fewer commits than they walk."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake import probes
from graphlake.storage import lineage as lin
from tests.timeline.test_timeline_replay import WIDER, replay_blame, replay_history

SCHEMA = "node Person { name: String @key\n age: I32?\n city: String? }\n"


def _others(g: gl.Graph, branch: str, n: int, step: int) -> None:
    """`n` commits of other rows: o3 and o4 on dev, o0..o2 elsewhere (no conflicts)."""
    pool = ["o3", "o4"] if branch == "dev" else ["o0", "o1", "o2"]
    for i in range(n):
        with g.write(branch, message=f"others {step}.{i}") as w:
            w.update("Person", [{"name": pool[(step + i) % len(pool)], "age": step * 10 + i}])


def _set(g: gl.Graph, branch: str, **props: object) -> None:
    with g.write(branch, message=f"k on {branch}: {props}") as w:
        w.update("Person", [{"name": "k", **props}])


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    root: Path = tmp_path_factory.mktemp("skip") / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "k", "age": 1, "city": "a"}])
        w.insert("Person", [{"name": f"o{i}", "age": i} for i in range(5)])
    _others(g, "main", 4, 1)
    _set(g, "main", age=2)
    _others(g, "main", 3, 2)
    g.create_branch("dev")  # a Lance fork at its first write
    _set(g, "dev", city="b")
    _others(g, "dev", 2, 3)
    _set(g, "dev", age=3)
    _others(g, "main", 2, 4)
    g.merge("dev")  # a merge commit on main changes k
    _others(g, "main", 2, 5)
    with g.write(message="delete k") as w:
        w.delete("Person", ["k"])
    _others(g, "main", 3, 6)
    with g.write(message="insert k again") as w:
        w.insert("Person", [{"name": "k", "age": 9}])
    _others(g, "main", 2, 7)
    g.create_branch("ff")
    _set(g, "ff", city="c")
    _others(g, "ff", 2, 8)
    g.merge("ff")  # fast-forward: main's states move to the ff branch's Lance lineage
    _set(g, "main", age=9)  # an update to the same value: row rewritten, nothing changes
    g.optimize()  # compaction rewrites the fragments, row version metadata kept
    _others(g, "main", 3, 9)
    g.apply_schema(WIDER, message="add score")  # a new layout mid-history
    _others(g, "main", 2, 11)
    _set(g, "main", age=10)
    _set(g, "main", score=5)
    _others(g, "main", 2, 10)
    return g


def test_history_agrees_with_a_replay_and_skips_commits(graph: gl.Graph) -> None:
    walked = sum(1 for _ in graph.log("main"))
    for key in ["k", "o0", "o3"]:
        with probes.collect() as counts:
            got = [(e.commit, e.op, e.changes) for e in graph.row_history("Person", key)]
        assert got == replay_history(graph, key), key
        assert counts["timeline_skipped"] > 0, key
        assert counts["timeline_commits"] < walked, key
    ops = [e.op for e in graph.row_history("Person", "k")]
    assert ops.count("insert") == 2 and ops.count("delete") == 1


def test_blame_agrees_with_a_replay_and_skips_commits(graph: gl.Graph) -> None:
    for key in ["k", "o0", "o4"]:
        with probes.collect() as counts:
            got = {b.property: b.commit for b in graph.blame("Person", key)}
        assert got == replay_blame(graph, key), key
        assert counts["timeline_skipped"] > 0, key


def test_history_of_a_commit_on_a_branch_and_before_the_fork(graph: gl.Graph) -> None:
    """From a revision on another Lance lineage (dev), back across the fork."""
    got = [e.op for e in graph.row_history("Person", "k", branch="dev")]
    assert got == ["update", "update", "update", "insert"]


def test_a_stamp_holds_only_on_its_lineage_after_the_write(graph: gl.Graph) -> None:
    head = graph.head()
    state = head.tables["Person"]
    stamp = lin.row_stamp(graph.repo.tables, state, "k")
    assert stamp is not None and stamp.holds(state)
    assert lin.row_stamp(graph.repo.tables, state, "nobody") is None
    older = [c.tables["Person"] for c in graph.log("main")]
    before_write = [s for s in older if s.version < stamp.written]
    assert before_write and not any(stamp.holds(s) for s in before_write)
    dev = graph.head("dev").tables["Person"]
    assert dev.lance_branch not in stamp.chain and not stamp.holds(dev)
