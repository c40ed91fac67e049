"""Lineage discovery: O(changed rows) cost, branch chains, fallbacks, on/off/verify agree."""

from __future__ import annotations

import shutil

import lance
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlake as gl
from graphlake import probes
from graphlake.merge.delta import DiscoverySettings, TableDelta, _verify, discover
from graphlake.storage import lineage as lin
from tests.conftest import SOCIAL, state

COST_SCHEMA = """
node Item { key: String @key  n: I64  tag: String? @unique  emb: Vector(16)? }
edge Link: Item -> Item @card(0..3)
"""


def build(tmp_path, rows: int) -> gl.Graph:
    import pyarrow as pa

    g = gl.Graph.init(tmp_path / f"g{rows}", COST_SCHEMA)
    keys = [f"k{i:07d}" for i in range(rows)]
    g.load(
        pa.table({"key": keys, "n": list(range(rows)), "tag": [f"t{i}" for i in range(rows)]}),
        table="Item",
    )
    g.load(pa.table({"src": keys[:-1], "dst": keys[1:]}), table="Link")
    return g


def one_row_changes(g: gl.Graph) -> None:
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Item", [{"key": "new-dev", "n": 1, "tag": "nd"}])
        w.update("Item", [{"key": "k0000010", "n": -1}])
        w.insert("Link", [{"src": "new-dev", "dst": "k0000001"}])
    with g.write("dev") as w:
        w.delete("Item", ["k0000020"], cascade=True)
    with g.write("main") as w:
        w.insert("Item", [{"key": "new-main", "n": 2, "tag": "nm"}])
        w.update("Item", [{"key": "k0000030", "n": -2}])
        w.delete("Item", ["k0000040"], cascade=True)


def test_cost_follows_changed_rows_not_table_size(tmp_path) -> None:
    counts = {}
    for rows in (10_000, 100_000):
        g = build(tmp_path, rows)
        one_row_changes(g)
        with probes.collect() as c:
            result = g.merge("dev", into="main", lineage="on")
        assert result.outcome == "merged"
        assert {s.discovery for s in result.stats.values() if s.route != "no_change"} == {"lineage"}
        assert g.get("Item", "k0000010")["n"] == -1
        assert g.get("Item", "k0000030")["n"] == -2
        assert g.get("Item", "k0000020") is None and g.get("Item", "k0000040") is None
        assert c["lookup_scans"] == 0, "a keyed lookup fell back to a full scan"
        counts[rows] = (c["discovery_rows"], c["lookup_rows"])
    small, large = counts[10_000], counts[100_000]
    assert large[0] <= small[0] + 2 and large[1] <= small[1] + 4, counts


def test_chain_of_forks_uses_lineage(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    with g.write("a") as w:
        w.insert("Person", [{"name": "A1"}])
    g.create_branch("b", from_="a")
    with g.write("b") as w:
        w.update("Person", [{"name": "Alice", "age": 77}])
        w.delete("Knows", ["k2"])
    g.create_branch("c", from_="b")
    with g.write("c") as w:
        w.insert("Person", [{"name": "C1"}])
    with g.write("main") as w:
        w.insert("Person", [{"name": "M1"}])
    result = g.merge("c", into="main", lineage="on")
    assert result.stats["Person"].discovery == "lineage"
    assert result.stats["Knows"].route == "pointer_adoption"
    got = set(g.nodes("Person").column("id").to_pylist())
    assert got == {"Alice", "Bob", "Carol", "A1", "C1", "M1"}
    assert g.get("Person", "Alice")["age"] == 77


def test_path_segments_walk_the_branch_tree() -> None:
    parents = {"x": ("main", 5), "y": ("x", 8), "z": ("main", 3)}
    segs = lin.path_segments(parents, ("main", 4), ("y", 10))
    assert segs == [lin.Segment("main", 4, 5), lin.Segment("x", 5, 8), lin.Segment("y", 8, 10)]
    segs = lin.path_segments(parents, ("z", 6), ("y", 9))
    assert segs == [
        lin.Segment("z", 3, 6),
        lin.Segment("main", 3, 5),
        lin.Segment("x", 5, 8),
        lin.Segment("y", 8, 9),
    ]
    with pytest.raises(lin.LineageUnavailable) as err:
        lin.path_segments(parents, ("ghost", 1), ("main", 2))
    assert err.value.reason == lin.FallbackReason.METADATA_INCONSISTENT


def test_version_cleanup_keeps_lineage_usable(people: gl.Graph) -> None:
    """Lance keeps fork points and `delta` needs only the two end manifests, so cleaning
    intermediate versions leaves lineage discovery working (and correct)."""
    import datetime as dt

    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Person", [{"name": "Bob", "age": 1}])
    for i in range(3):
        with g.write("main") as w:
            w.insert("Person", [{"name": f"m{i}"}])
    uri = g.repo.tables.uri(g.head().tables["Person"].table_id)
    stats = lance.dataset(uri, storage_options=g.storage_options).cleanup_old_versions(
        older_than=dt.timedelta(0), error_if_tagged_old_versions=False
    )
    assert stats.old_versions > 0
    g.repo.tables._cache.clear()
    result = g.merge("dev", into="main", lineage="verify")
    assert result.stats["Person"].fallback is None
    assert g.get("Person", "Bob")["age"] == 1
    assert {f"m{i}" for i in range(3)} <= set(g.nodes("Person").column("id").to_pylist())


def test_over_budget_candidates_fall_back_to_the_walk(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": f"d{i}"} for i in range(5)])
    ref_base = g.head("main").tables["Person"]
    delta = discover(
        g.repo.tables,
        ref_base,
        g.head("dev").tables["Person"],
        DiscoverySettings(candidate_budget=2),
        "source",
    )
    assert delta.path == "walk"
    assert delta.fallback == lin.FallbackReason.CANDIDATE_BUDGET.value
    assert delta.inserted() == [f"d{i}" for i in range(5)]
    lineage = discover(g.repo.tables, ref_base, g.head("dev").tables["Person"])
    assert lineage.path == "lineage" and lineage.keys == delta.keys


@pytest.mark.parametrize("later", ["nothing", "delete_new", "update_new", "delete_old"])
def test_insert_only_paths_read_new_fragments_exactly(people: gl.Graph, later: str) -> None:
    """A path that only added fragments is read from them; anything that touched an
    existing fragment takes the segment deltas. Either way lineage equals the walk."""
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": f"d{i}", "age": i} for i in range(4)])
    with g.write("dev") as w:
        w.insert("Person", [{"name": "d9", "age": 9}])
    if later != "nothing":
        with g.write("dev") as w:
            if later == "delete_new":
                w.delete("Person", ["d1"], cascade=True)
            elif later == "update_new":
                w.update("Person", [{"name": "d2", "age": 20}])
            else:
                w.delete("Person", ["Carol"], cascade=True)
    base, side = g.head("main").tables["Person"], g.head("dev").tables["Person"]
    lineage = discover(g.repo.tables, base, side, DiscoverySettings(lineage="on"))
    walk = discover(g.repo.tables, base, side, DiscoverySettings(lineage="off"))
    assert lineage.path == "lineage"
    _verify("Person", "source", lineage, walk)
    expected = {"d0", "d1", "d2", "d3", "d9"} - ({"d1"} if later == "delete_new" else set())
    assert set(lineage.inserted()) == expected
    assert lineage.deleted() == (["Carol"] if later == "delete_old" else [])
    assert lineage.only_inserts == (later != "delete_old")
    if later == "update_new":
        assert lineage.side["d2"]["age"] == 20


def test_verify_reports_a_disagreement() -> None:
    a = TableDelta(keys={"x"}, side={"x": {"id": "x"}})
    b = TableDelta(keys=set())
    with pytest.raises(gl.LineageMismatchError, match="lineage only: \\['x'\\]"):
        _verify("t", "source", a, b)


def test_lineage_setting_is_validated(people: gl.Graph, monkeypatch) -> None:
    people.create_branch("dev")
    with pytest.raises(gl.MergeError, match="lineage"):
        people.merge("dev", into="main", lineage="sometimes")
    monkeypatch.setenv("GRAPHLAKE_MERGE_LINEAGE", "bogus")
    with pytest.raises(gl.MergeError, match="lineage"):
        people.merge("dev", into="main")
    with pytest.raises(gl.MergeError, match="memory_budget"):
        people.merge("dev", into="main", lineage="off", memory_budget=1024)


# --- random histories: lineage on, off and verify merge identically ----------------------

KEYS = [f"p{i}" for i in range(6)]
op = st.tuples(
    st.sampled_from(["insert", "update", "delete"]), st.sampled_from(KEYS), st.integers(0, 3)
)
history = st.lists(st.lists(op, min_size=1, max_size=3), min_size=0, max_size=3)


def apply_history(g: gl.Graph, branch: str, commits) -> None:
    """Apply generated ops, skipping those that do not fit the branch's current keys."""
    for ops in commits:
        present = set(g.nodes("Person", branch=branch, columns=["id"]).column("id").to_pylist())
        with g.write(branch) as w:
            for kind, key, n in ops:
                if kind == "insert" and key not in present:
                    w.insert("Person", [{"name": key, "age": n}])
                    present.add(key)
                elif kind == "update" and key in present:
                    w.update("Person", [{"name": key, "age": n + 10}])
                elif kind == "delete" and key in present:
                    w.delete("Person", [key])
                    present.discard(key)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("prop") / "seed"
    g = gl.Graph.init(root, SOCIAL)
    with g.write() as w:
        w.insert("Person", [{"name": k, "age": 1} for k in KEYS[:3]])
    return str(root)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(src=history, tgt=history)
def test_random_histories_merge_identically(seeded, tmp_path_factory, src, tgt) -> None:
    outcomes = {}
    base = tmp_path_factory.mktemp("h")
    template = base / "t"
    shutil.copytree(seeded, template)
    g = gl.Graph.open(template)
    g.create_branch("dev")
    apply_history(g, "dev", src)
    apply_history(g, "main", tgt)
    for mode in ("on", "off", "verify"):
        root = base / mode
        shutil.copytree(template, root)
        gm = gl.Graph.open(root)
        try:
            r = gm.merge("dev", into="main", lineage=mode)
            outcomes[mode] = (r.outcome, state(gm)["Person"])
        except gl.MergeConflictError as exc:
            outcomes[mode] = ("conflict", sorted((c.kind, c.entity_id) for c in exc.conflicts))
    assert outcomes["on"] == outcomes["off"] == outcomes["verify"]
