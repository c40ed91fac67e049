"""gc keeps the lineage merges use: after gc, a merge of branches (nested ones included)
still discovers changes by Lance's version deltas, not the O(rows) walk, and merges to
the same answer as a fresh computation on an uncollected copy of the graph.

What lineage needs that gc used to remove: a Lance branch's own copy of the version it
forked from (`tree/<branch>/_versions/<fork>.manifest`). A lineage path enters a branch
there (`delta(begin=fork)`, deleted row ids mapped to keys at the fork), and Lance's
cleanup keeps the parent's copy of a fork point but not the child's.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import lance
import pytest

import graphlake as gl
from graphlake.storage import lineage

ZERO = dt.timedelta(0)
SCHEMA = """
node Person { name: String @key  age: I32?  city: String? }
edge Knows: Person -> Person
"""


def _rows(g: gl.Graph, ref: str) -> dict[str, list[dict[str, Any]]]:
    snap = g.snapshot(ref)
    return {
        n: sorted(snap.read(n).to_pylist(), key=lambda r: r["id"]) for n in g.schema.table_names
    }


def _history(root: Path) -> gl.Graph:
    """main, `dev` off main, `dev/sub` off dev, `feat` off main; each with several writes
    (updates, inserts, deletes, cascading to edges) after its fork, and main moving on."""
    g = gl.Graph.init(str(root), SCHEMA)
    with g.write("main") as w:
        w.insert("Person", [{"name": f"p{i:02d}", "age": i} for i in range(40)])
        w.insert(
            "Knows",
            [{"id": f"k{i}", "src": f"p{i:02d}", "dst": f"p{i + 1:02d}"} for i in range(39)],
        )
    g.create_branch("dev")
    g.create_branch("feat")
    for i in range(3):
        with g.write("dev") as w:
            w.update("Person", [{"name": f"p{i:02d}", "age": 100 + i}])
    with g.write("dev") as w:
        w.delete("Person", ["p10"], cascade=True)
        w.insert("Person", [{"name": "d1", "city": "Oslo"}])
    g.create_branch("dev/sub", from_="dev")
    with g.write("dev/sub") as w:
        w.update("Person", [{"name": "p20", "city": "Rome"}])
        w.delete("Person", ["p21"], cascade=True)
    with g.write("dev/sub") as w:
        w.insert("Person", [{"name": "s1", "age": 7}])
    with g.write("dev") as w:
        w.update("Person", [{"name": "p30", "age": 300}])
    with g.write("feat") as w:
        w.delete("Person", ["p35"], cascade=True)
    with g.write("feat") as w:
        w.update("Person", [{"name": "p36", "city": "Lima"}])
    with g.write("main") as w:
        w.update("Person", [{"name": "p05", "age": 500}])
    with g.write("main") as w:
        w.delete("Person", ["p15"], cascade=True)
    return g


MERGES = [("dev/sub", "dev"), ("dev", "main"), ("feat", "main")]


def _merge_all(g: gl.Graph, lineage_mode: str) -> list[dict[str, Any]]:
    out = []
    for source, into in MERGES:
        r = g.merge(source, into=into, lineage=lineage_mode)
        assert r.outcome == "merged"
        out.append(
            {
                "routes": r.routes,
                "discovery": {n: (st.discovery, st.fallback) for n, st in r.stats.items()},
                "counts": {
                    n: (st.source_changes, st.target_changes, st.effects)
                    for n, st in r.stats.items()
                },
            }
        )
    return out


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> tuple[gl.Graph, gl.Graph, Any]:
    """The history collected by gc (with zero grace), and an untouched copy of it."""
    tmp = tmp_path_factory.mktemp("gc-lineage")
    g = _history(tmp / "g")
    shutil.copytree(tmp / "g", tmp / "copy")
    report = g.gc(grace=ZERO, reflog_keep=ZERO)
    assert not report.warnings, report.warnings
    lineage._PARENTS.clear()  # nothing cached from before the gc
    return gl.Graph.open(str(tmp / "g")), gl.Graph.open(str(tmp / "copy")), report


def test_gc_keeps_each_branch_fork_version_and_nothing_of_deleted_ones(
    collected: tuple[gl.Graph, gl.Graph, Any],
) -> None:
    g, _, report = collected
    assert report.versions > 0  # gc did remove intermediate versions
    state = g.head("dev/sub").tables["Person"]
    ds = lance.dataset(g.repo.tables.uri(state.table_id), storage_options=g.storage_options)
    for name, info in ds.branches.list().items():
        versions = {v["version"] for v in ds.checkout_version((name, None)).versions()}
        assert int(info["parent_version"]) in versions, name


def test_merges_after_gc_use_lineage_and_equal_a_fresh_computation(
    collected: tuple[gl.Graph, gl.Graph, Any],
) -> None:
    g, copy, _ = collected
    after_gc = _merge_all(g, "on")
    for step in after_gc:
        for table, (discovery, fallback) in step["discovery"].items():
            assert fallback is None, (table, fallback)
            assert discovery in ("lineage", "same-state"), (table, discovery)
    assert any(d == "lineage" for step in after_gc for d, _ in step["discovery"].values())
    # The same merges on the uncollected copy, by the walk (no lineage at all).
    fresh = _merge_all(copy, "off")
    assert [s["routes"] for s in after_gc] == [s["routes"] for s in fresh]
    assert [s["counts"] for s in after_gc] == [s["counts"] for s in fresh]
    for branch in ("main", "dev", "dev/sub", "feat"):
        assert _rows(g, branch) == _rows(copy, branch), branch
    assert g.fsck(deep=True).ok


def test_fsck_deep_passes_after_gc(collected: tuple[gl.Graph, gl.Graph, Any]) -> None:
    g, _, _ = collected
    report = g.fsck(deep=True)
    assert report.ok, report.problems
