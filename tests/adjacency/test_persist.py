"""Persisted adjacencies (adjacency.persist): written after a full build at a branch
head, loaded by a process with an empty cache, equal to a fresh build after writes,
merges, optimize and gc (directly or through the lineage delta from an older entry);
a damaged, foreign or stale entry is never trusted; gc removes the stale ones and fsck
is content with the rest."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

import graphlake as gl
from graphlake import probes
from graphlake.adjacency import load, persist
from graphlake.adjacency.cache import CACHE
from graphlake.adjacency.csr import from_edges
from graphlake.adjacency.load import adjacency, state_key

SCHEMA = """
node P { name: String @key  age: I32? }
node C { name: String @key }
edge K: P -> P
edge W: P -> C
"""
ZERO = dt.timedelta(0)


def fresh(g, edge, branch="main"):
    snap = g.snapshot(branch)
    e = snap.type(edge, "edge")
    t = snap.dataset(edge).to_table(columns=["src", "dst", "id"])
    keys = {n: snap.dataset(n).to_table(columns=["id"])["id"].combine_chunks() for n in ("P", "C")}
    return from_edges(
        keys[e.src],
        None if e.dst == e.src else keys[e.dst],
        t["src"].combine_chunks(),
        t["dst"].combine_chunks(),
        t["id"].combine_chunks(),
    )


@pytest.fixture
def g(tmp_path, monkeypatch):
    monkeypatch.delenv(persist.ENV, raising=False)
    g = gl.Graph.init(str(tmp_path / "g"), SCHEMA)
    with g.write(message="seed") as w:
        w.insert("P", [{"name": f"p{i:02d}", "age": i} for i in range(20)])
        w.insert("C", [{"name": "c1"}, {"name": "c2"}])
        w.insert(
            "K",
            [
                {"src": f"p{i % 20:02d}", "dst": f"p{(i * 7 + 3) % 20:02d}", "id": f"k{i:03d}"}
                for i in range(60)
            ],
        )
        w.insert(
            "W", [{"src": f"p{i:02d}", "dst": f"c{1 + i % 2}", "id": f"w{i}"} for i in range(8)]
        )
    CACHE.clear()
    builds: list[str] = []
    real = load._build
    monkeypatch.setattr(
        load, "_build", lambda snap, edge: builds.append(edge.name) or real(snap, edge)
    )
    g.builds = builds
    g.base = persist.folder(str(tmp_path / "g"))
    yield g
    CACHE.clear()


def entry(g, edge, branch="main"):
    snap = g.snapshot(branch)
    states = state_key(snap, snap.type(edge, "edge"))[1:]
    return g.base / states[0][0] / persist.entry_name(states), states


def cold(g, edge, branch="main"):
    """The adjacency as a new process gets it (an empty cache), checked against a fresh
    build."""
    CACHE.clear()
    got = adjacency(g.snapshot(branch), edge)
    persist.flush()  # a derived entry is saved in the background
    assert got.equals(fresh(g, edge, branch)), (edge, branch)
    return got


def test_a_head_build_is_persisted_and_loaded(g):
    cold(g, "K")
    cold(g, "W")
    assert g.builds == ["K", "W"]
    for edge in ("K", "W"):
        path, states = entry(g, edge)
        assert persist.load(path, states).equals(fresh(g, edge))
    with probes.collect() as how:
        got = cold(g, "K")
    assert g.builds == ["K", "W"] and how == {"adjacency.loaded": 1}  # loaded, not built
    assert got.same_type and not cold(g, "W").same_type
    # Traversals on the loaded adjacency answer as on a built one.
    q = "MATCH (a:P {name: 'p01'})-[:K*1..3]->(b) RETURN count(*) AS n"
    CACHE.clear()
    loaded = g.query(q).to_pylist()
    shutil.rmtree(g.base)
    CACHE.clear()
    assert g.query(q).to_pylist() == loaded


def test_persisted_equals_fresh_after_writes_merges_optimize_and_gc(g):
    cold(g, "K")
    with g.write(message="edges and nodes") as w:
        w.insert("P", [{"name": "p00a"}, {"name": "zz"}])
        w.insert("K", [{"src": "zz", "dst": "p00a", "id": "k999"}])
        w.delete("K", ["k001"])
    with probes.collect() as how:
        cold(g, "K")  # from the older entry plus the lineage delta
    assert g.builds == ["K"] and how == {"adjacency.derived_from_persisted": 1}
    path, states = entry(g, "K")  # and saved for the next process
    assert persist.load(path, states).equals(fresh(g, "K"))
    g.create_branch("a")
    with g.write("a") as w:
        w.insert("K", [{"src": "p10", "dst": "p11", "id": "ka"}])
        w.delete("P", ["p03"], cascade=True)
    cold(g, "K", "a")
    g.merge("a", into="main")
    cold(g, "K")
    g.optimize("main")
    cold(g, "K")
    g.gc(grace=ZERO, reflog_keep=ZERO)
    cold(g, "K")
    with g.write(message="after gc") as w:
        w.insert("K", [{"src": "p14", "dst": "p15", "id": "kz"}])
    cold(g, "K")
    cold(g, "K", "a")
    # A fresh build persisted at each new head; the delta is the usual path.
    path, states = entry(g, "K")
    if path.exists():
        assert persist.load(path, states).equals(fresh(g, "K"))


def test_a_damaged_entry_is_rebuilt_never_trusted(g):
    for n, damage in enumerate(["flip", "truncate", "meta", "missing"], 2):
        cold(g, "K")
        path, states = entry(g, "K")
        target = path / "out_targets.bin"
        if damage == "flip":
            data = bytearray(target.read_bytes())
            data[len(data) // 2] ^= 0x01  # still a valid node id: only the checksum sees it
            target.write_bytes(bytes(data))
        elif damage == "truncate":
            target.write_bytes(target.read_bytes()[:-4])
        elif damage == "meta":
            (path / "meta.json").write_text("{not json")
        else:
            (path / "edge_ids.arrow").unlink()
        assert persist.load(path, states) is None, damage
        cold(g, "K")
        assert g.builds == ["K"] * n, damage
        assert persist.load(path, states).equals(fresh(g, "K"))  # replaced by a good one


def test_an_entry_of_other_states_is_not_taken_for_these(g):
    cold(g, "K")
    old_path, _ = entry(g, "K")
    with g.write(message="one more edge") as w:
        w.insert("K", [{"src": "p01", "dst": "p02", "id": "knew"}])
    path, states = entry(g, "K")
    assert not path.exists()  # derived through the delta in this process: nothing saved
    shutil.copytree(old_path, path)  # an old entry under the new states' name
    assert persist.load(path, states) is None  # its meta.json names other states
    cold(g, "K")  # derived from the old entry through the delta instead
    assert persist.load(path, states).equals(fresh(g, "K"))  # replaced by a good one
    shutil.rmtree(path)
    # Nor can a missing lineage give a wrong answer: the delta falls back to a build.
    meta = json.loads((old_path / "meta.json").read_text())
    meta["key"][0][2] = 999  # a version that never existed
    (old_path / "meta.json").write_text(json.dumps(meta))
    cold(g, "K")


def test_only_branch_heads_are_persisted_and_it_can_be_switched_off(g, monkeypatch):
    with g.write(message="later") as w:
        w.insert("K", [{"src": "p01", "dst": "p02", "id": "knew"}])
    cold(g, "K", "main~1")
    assert g.builds == ["K"] and not g.base.exists()
    monkeypatch.setenv(persist.ENV, "0")
    cold(g, "K")
    assert not g.base.exists()
    monkeypatch.delenv(persist.ENV)
    cold(g, "K")
    assert entry(g, "K")[0].exists()


def test_gc_removes_stale_entries_and_fsck_accepts_the_rest(g):
    cold(g, "K")
    cold(g, "W")
    g.create_branch("b")
    with g.write(message="moves K's head") as w:
        w.insert("K", [{"src": "p01", "dst": "p02", "id": "knew"}])
    CACHE.clear()
    cold(g, "K")  # main's new K state: derived from the old entry, saved
    assert entry(g, "K")[0].exists()
    CACHE.clear()
    stale = entry(g, "K", "b")[0]  # b still points at the old states: not stale yet
    (g.base / stale.parent.name / ".tmp-abandoned").mkdir()
    dry = g.gc(grace=ZERO, reflog_keep=ZERO, dry_run=True)
    assert dry.adjacencies == 1 and stale.exists()  # the temporary folder only
    g.delete_branch("b")
    report = g.gc(grace=ZERO, reflog_keep=ZERO)
    assert report.adjacencies == 2 and report.adjacency_bytes > 0
    assert not stale.exists() and entry(g, "W")[0].exists()
    assert g.fsck().ok
    cold(g, "K")
    cold(g, "W")
    # A grace period protects recent entries.
    g.create_branch("c")
    g.delete_branch("c")
    assert g.gc(grace=dt.timedelta(hours=1)).adjacencies == 0


def test_algorithms_and_traversals_run_on_a_loaded_entry(g):
    """A loaded entry's arrays are read-only memory maps: nothing may write into them."""
    pytest.importorskip("igraph")
    queries = [
        "MATCH (a:P {name: 'p01'})-[:K*1..3]-(b) RETURN b.name",
        "MATCH (a:P)-[:K*1..2]->(b) RETURN count(*) AS n",
        "MATCH p = shortestPath((a:P {name: 'p01'})-[:K*..8]->(b:P {name: 'p09'})) "
        "RETURN length(p)",
    ]

    def answers():
        out = []
        for run in (
            lambda: g.algo.pagerank("K"),
            lambda: g.algo.strongly_connected_components("K"),
            lambda: g.algo.shortest_paths("K", source="p01"),
            *(lambda q=q: g.query(q) for q in queries),
        ):
            CACHE.clear()
            out.append(sorted(map(repr, run().to_pylist())))
        return out

    built = answers()
    assert g.builds == ["K"]
    assert entry(g, "K")[0].exists()
    assert answers() == built and g.builds == ["K"]  # every one on the loaded entry
