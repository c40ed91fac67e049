"""Search indexes across writes, merges, forks, optimize and gc: only `optimize` builds or
folds them, rows outside an index are searched exactly, and merges do no index work."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import graphlake as gl
from graphlake import probes
from graphlake.storage import search_indexes as indexes
from graphlake.storage.tables import INDEX_REFRESH_FRAGMENTS

SCHEMA = """
node Item { name: String @key, tag: String @search, v: Vector(16) @index(metric="cosine") }
node Other { name: String @key }
"""
ROWS = indexes.MIN_ANN_ROWS + 400
Q = np.linspace(-1.0, 1.0, 16).tolist()


def items(lo: int, hi: int) -> list[dict]:
    rng = np.random.default_rng(lo)
    return [
        {"name": f"i{i}", "tag": f"t{i % 7}", "v": rng.normal(size=16).tolist()}
        for i in range(lo, hi)
    ]


def coverage(g: gl.Graph, branch: str = "main") -> tuple[int, int]:
    (c,) = g.search("Item", vector=Q, branch=branch, explain=True).coverage
    return c.indexed_rows, c.exact_rows


def segments(g: gl.Graph, branch: str = "main") -> set[str]:
    ds = g.snapshot(branch).dataset("Item")
    return {str(s.uuid) for i in ds.describe_indices() if i.name == "v_ann" for s in i.segments}


def one_row_commits(g: gl.Graph, branch: str, start: int, n: int, twin: bool = False) -> None:
    for i in range(start, start + n):
        row = items(i, i + 1)[0]
        with g.write(branch) as w:
            w.insert("Item", [row | {"v": Q} if twin and i == start else row])


@pytest.fixture(scope="module")
def g(tmp_path_factory) -> gl.Graph:
    g = gl.Graph.init(tmp_path_factory.mktemp("lifecycle") / "g", SCHEMA)
    with g.write() as w:
        w.insert("Item", items(0, ROWS))
    assert coverage(g) == (0, ROWS)  # a write builds no ANN index
    with probes.collect() as counts:
        g.optimize()
    assert sum(n for k, n in counts.items() if k.startswith(indexes.VECTOR_PROBE)) == 1
    g.create_branch("fork")  # shares main's index files
    return g


def test_optimize_builds_the_ann_index(g):
    plan = g.search("Item", vector=Q, explain=True)
    (c,) = plan.coverage
    assert (c.index, c.index_type) == ("v_ann", "IVF_HNSW_SQ")
    assert (c.indexed_rows, c.exact_rows) == (ROWS, 0)
    assert plan.to_dict()["coverage"][0]["indexed_rows"] == ROWS


def test_a_fork_shares_its_parents_index(g):
    assert segments(g, "fork") == segments(g) != set()
    assert coverage(g, "fork") == (ROWS, 0)


def test_writes_are_searched_exactly_and_never_fold_the_index(g):
    g.create_branch("w")
    before = segments(g, "w")
    # Enough one-row commits that the write path refreshes its BTREE indexes.
    one_row_commits(g, "w", 10_000, INDEX_REFRESH_FRAGMENTS + 1, twin=True)
    assert segments(g, "w") == before
    assert coverage(g, "w") == (ROWS, INDEX_REFRESH_FRAGMENTS + 1)
    best = g.search("Item", vector=Q, k=1, branch="w", columns=["name"])
    assert best["name"].to_pylist() == ["i10000"] and best["_distance"][0].as_py() < 1e-6


def test_merge_many_adopts_shards_without_index_work(g):
    g.create_branch("m")
    for shard, start in (("sa", 20_000), ("sb", 30_000)):
        g.create_branch(shard, from_="m")
        one_row_commits(g, shard, start, INDEX_REFRESH_FRAGMENTS // 2 + 1, twin=shard == "sb")
    before = segments(g, "m")
    r = g.merge_many(["sa", "sb"], into="m")
    assert {s.vector_index_calls for s in r.stats.values()} == {0}
    assert {s.fts_index_calls for s in r.stats.values()} == {0}
    assert r.to_dict()["stats"]["Item"]["vector_index_calls"] == 0
    added = 2 * (INDEX_REFRESH_FRAGMENTS // 2 + 1)
    assert segments(g, "m") == before
    assert coverage(g, "m") == (ROWS, added)
    assert g.search("Item", vector=Q, k=1, branch="m")["name"].to_pylist() == ["i30000"]
    text = g.search("Item", text="t3", k=500, branch="m", columns=["name"])
    adopted = next(f"i{i}" for i in range(20_000, 20_100) if i % 7 == 3)
    assert adopted in text["name"].to_pylist()  # adopted rows are found by text too
    g.optimize("m")  # folds the uncovered rows into the index, incrementally
    assert coverage(g, "m") == (ROWS + added, 0)
    assert g.search("Item", vector=Q, k=1, branch="m")["name"].to_pylist() == ["i30000"]


def test_pointer_adoption_carries_the_sources_index(g):
    g.create_branch("pa-into")
    g.create_branch("pa", from_="pa-into")
    one_row_commits(g, "pa", 40_000, 3, twin=True)
    g.optimize("pa")  # folds the three rows into pa's index
    with g.write("pa-into") as w:  # the target changes another table only
        w.insert("Other", [{"name": "o"}])
    r = g.merge("pa", into="pa-into")
    assert r.routes["Item"] == "pointer_adoption"
    assert r.stats["Item"].vector_index_calls == 0
    assert segments(g, "pa-into") == segments(g, "pa")
    assert coverage(g, "pa-into") == (ROWS + 3, 0)
    assert g.search("Item", vector=Q, k=1, branch="pa-into")["name"].to_pylist() == ["i40000"]


def test_deleted_rows_never_come_back(g):
    g.create_branch("d")
    top = g.search("Item", vector=Q, k=3, branch="d")["name"].to_pylist()
    with g.write("d") as w:
        w.delete("Item", top[:1])
    assert top[0] not in g.search("Item", vector=Q, k=50, branch="d")["name"].to_pylist()
    g.optimize("d")
    assert top[0] not in g.search("Item", vector=Q, k=50, branch="d")["name"].to_pylist()
    assert g.search("Item", vector=Q, k=3, branch="d")["name"].to_pylist()[:2] == top[1:]


def test_gc_keeps_the_index_files_reachable_commits_need(g):
    expected = g.search("Item", vector=Q, k=5, branch="fork")["name"].to_pylist()
    g.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    g2 = gl.Graph.open(g.uri)
    assert g2.search("Item", vector=Q, k=5, branch="fork")["name"].to_pylist() == expected
    assert coverage(g2, "fork") == (ROWS, 0)
