"""merge_many: N branches land in the target as one commit against one common base."""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.conftest import reopen, state


def ids(g: gl.Graph, table: str = "Person", branch: str = "main") -> set[str]:
    return set(g.nodes(table, branch=branch, columns=["id"]).column("id").to_pylist())


def shards(g: gl.Graph, n: int, rows: int = 5) -> list[str]:
    names = [f"ingest/run1/w{i}" for i in range(n)]
    for i, name in enumerate(names):
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Person", [{"name": f"w{i}-{j}", "age": j} for j in range(rows)])
            w.insert("Knows", [{"src": f"w{i}-0", "dst": "Alice"}])
    return names


@pytest.mark.parametrize("n", [3, 8])
def test_insert_only_shards_land_as_one_commit(people: gl.Graph, n: int) -> None:
    g = people
    names = shards(g, n)
    before = g.head().id
    result = g.merge_many(names, into="main")
    assert result.outcome == "merged"
    head = g.head()
    assert head.parents == (before, *(g.head(s).id for s in names))
    assert len(g.log()) == len(g.log(before)) + n + 1  # the shard commits + one merge
    assert result.routes["Person"] == "insertion_replay"
    assert result.routes["Knows"] == "insertion_replay"
    assert ids(g) == {"Alice", "Bob", "Carol"} | {f"w{i}-{j}" for i in range(n) for j in range(5)}
    assert g.edges("Knows").num_rows == 2 + n


def test_mixed_changes_and_a_moving_target(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b", "c"):
        g.create_branch(name)
    with g.write("a") as w:
        w.update("Person", [{"name": "Alice", "age": 1}])
    with g.write("b") as w:
        w.delete("Knows", ["k2"])
        w.insert("Person", [{"name": "B1"}])
    with g.write("c") as w:
        w.update("Person", [{"name": "Alice", "role": "pm"}])  # a different property
    with g.write("main") as w:
        w.update("Person", [{"name": "Bob", "age": 99}])
    result = g.merge_many(["a", "b", "c"], into="main")
    assert result.outcome == "merged"
    alice = g.get("Person", "Alice")
    assert (alice["age"], alice["role"]) == (1, "pm")
    assert g.get("Person", "Bob")["age"] == 99
    assert "B1" in ids(g)
    assert g.edges("Knows").column("id").to_pylist() == ["k1"]
    assert len(g.head().parents) == 4


def test_overlap_conflicts_and_identical_rows_converge(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b", "c"):
        g.create_branch(name)
    with g.write("a") as w:
        w.insert("Person", [{"name": "Same", "age": 1}, {"name": "Clash", "age": 1}])
    with g.write("b") as w:
        w.insert("Person", [{"name": "Same", "age": 1}, {"name": "Clash", "age": 2}])
    with g.write("c") as w:
        w.insert("Person", [{"name": "C"}])
    before = state(g)
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["a", "b", "c"], into="main")
    assert [(c.kind, c.entity_id) for c in err.value.conflicts] == [("divergent_insert", "Clash")]
    [clash] = err.value.conflicts
    # Between two sources: named, with each source's row (main has no such row).
    assert clash.between_sources and clash.sides == ("b", "a")
    assert {name: row["age"] for name, row in clash.rows.items()} == {"b": 2, "a": 1}
    assert clash.source["age"] == 2 and clash.target is None
    assert "by b and a" in clash.message
    assert state(g) == before
    # A conflict with the target names the sources that changed the key, and the target.
    g.create_branch("m2")
    with g.write("m2") as w:
        w.insert("Person", [{"name": "C", "age": 9}])
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["a", "b", "c"], into="m2", strategy="ours")
    assert [(c.entity_id, c.sides, c.between_sources) for c in err.value.conflicts] == [
        ("Clash", ("b", "a"), True)
    ]  # no strategy resolves a conflict between sources
    r = g.merge_many(["a", "c"], into="m2", strategy="ours", dry_run=True)
    [resolved] = r.resolved
    assert (resolved.entity_id, resolved.sides, resolved.between_sources) == (
        "C",
        ("c", "m2"),
        False,
    )
    with g.write("b") as w:
        w.update("Person", [{"name": "Clash", "age": 1}])
    assert g.merge_many(["a", "b", "c"], into="main").outcome == "merged"
    assert {"Same", "Clash", "C"} <= ids(g)


def test_a_conflict_between_sources_holds_the_targets_row_in_target(people: gl.Graph) -> None:
    """Issue 23 item 4: `target` is the target's row; each source's row is under its
    name in `rows`, in Python and JSON; a conflict with the target names both too."""
    g = people
    with g.write("main") as w:
        w.update("Person", [{"name": "Bob", "age": 30}])
    for name, age in (("mm-a", 31), ("mm-b", 32)):
        g.create_branch(name)
        with g.write(name) as w:
            w.update("Person", [{"name": "Bob", "age": age}])
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["mm-a", "mm-b"], into="main")
    [c] = err.value.conflicts
    d = c.to_dict()
    assert d["sides"] == ["mm-b", "mm-a"] and d["between_sources"]
    assert d["target"]["age"] == 30
    assert {n: r["age"] for n, r in d["rows"].items()} == {"mm-a": 31, "mm-b": 32}
    g.create_branch("mm-c")
    with g.write("mm-c") as w:
        w.insert("Person", [{"name": "Cy"}])
    with g.write("main") as w:
        w.update("Person", [{"name": "Bob", "age": 29}])
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["mm-a", "mm-c"], into="main")
    [c] = err.value.conflicts
    assert not c.between_sources and c.sides == ("mm-a", "main")
    assert {n: r["age"] for n, r in c.rows.items()} == {"mm-a": 31, "main": 29}
    assert (c.source["age"], c.target["age"]) == (31, 29)


def test_strict_disjoint_refuses_any_overlap(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b"):
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Person", [{"name": "Same", "age": 1}])
    before = state(g)
    with pytest.raises(gl.MergeError, match=r"strict_disjoint.*'Same'"):
        g.merge_many(["a", "b"], into="main", strict_disjoint=True)
    assert state(g) == before
    assert g.merge_many(["a", "b"], into="main").outcome == "merged"


@pytest.mark.parametrize(
    ("layout", "shared"),
    [
        ({"a": ["A1", "A2"], "b": ["B1", "B2"]}, None),  # key ranges apart
        ({"a": ["A1", "C1"], "b": ["B1", "D1"]}, None),  # ranges interleave, no key shared
        ({"a": ["A1", "C1"], "b": ["B1", "C1"]}, "C1"),  # one key shared
        ({"a": ["A1"], "b": ["B1"], "c": ["C1", "Z9"], "d": ["Z9"]}, "Z9"),
    ],
)
def test_overlap_of_insert_only_shards_is_found_exactly(
    people: gl.Graph, layout: dict[str, list[str]], shared: str | None
) -> None:
    """Insert-only shards keep their keys columnar; whether two share a key is decided
    on those columns (ranges apart, or sorted neighbours), and must stay exact."""
    g = people
    for name, keys in layout.items():
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Person", [{"name": k, "age": len(name)} for k in keys])
    before = state(g)
    if shared is None:
        result = g.merge_many(list(layout), into="main", strict_disjoint=True)
        assert result.routes["Person"] == "insertion_replay"
        assert ids(g) == {"Alice", "Bob", "Carol"} | {k for ks in layout.values() for k in ks}
        return
    with pytest.raises(gl.MergeError, match=rf"strict_disjoint.*1 key\(s\): '{shared}'"):
        g.merge_many(list(layout), into="main", strict_disjoint=True)
    assert state(g) == before


def test_insert_only_target_and_source_sharing_a_key_conflict(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b"):
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Person", [{"name": f"{name}-only"}])
    with g.write("b") as w:
        w.insert("Person", [{"name": "Twice", "age": 2}])
    with g.write("main") as w:
        w.insert("Person", [{"name": "Twice", "age": 1}, {"name": "M1"}])
    before = state(g)
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["a", "b"], into="main")
    assert [(c.kind, c.entity_id) for c in err.value.conflicts] == [("divergent_insert", "Twice")]
    assert state(g) == before


def test_insert_only_shards_are_checked_across_rows(people: gl.Graph) -> None:
    """An insert-only merge reads only the columns its checks need (key, endpoints,
    @unique and constrained properties); clashes across shards are still found."""
    g = people
    for name, (person, email) in {"a": ("A1", "x@y.z"), "b": ("B1", "x@y.z")}.items():
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Person", [{"name": person, "email": email, "role": "pm", "age": 3}])
            w.insert("WorksAt", [{"src": "Bob", "dst": "Acme"}])  # Bob may have one job
    before = state(g)
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["a", "b"], into="main")
    assert sorted((c.kind, c.entity_id) for c in err.value.conflicts) == [
        ("cardinality_violation", "Bob"),
        ("unique_violation", "B1"),
    ]
    assert state(g) == before
    assert g.merge_many(["a"], into="main").outcome in ("merged", "fast_forward")
    assert g.get("Person", "A1") == {
        "id": "A1",
        "name": "A1",
        "age": 3,
        "email": "x@y.z",
        "role": "pm",
    }


def test_checked_columns_cover_every_cross_row_check() -> None:
    from graphlake.constraints.check import checked_columns
    from graphlake.schema.parser import parse_schema

    schema = parse_schema("""
    node N { k: String @key  a: String? @unique  b: I64? @range(0..9)  c: String? @check("x+")
             d: enum(p, q)?  e: [enum(p, q)]?  f: String?  v: Vector(4)? }
    edge L: N -> N @card(0..2) { w: I64? @range(1..2)  z: String? }
    """)
    assert checked_columns(schema.table("N")) == ["id", "a", "b", "c", "d", "e"]
    assert checked_columns(schema.table("L")) == ["id", "src", "dst", "w"]


def test_cross_shard_orphan_edge(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b"):
        g.create_branch(name)
    with g.write("a") as w:
        w.delete("Person", ["Carol"], cascade=True)
    with g.write("b") as w:
        w.insert("Knows", [{"id": "kc", "src": "Alice", "dst": "Carol"}])
    with pytest.raises(gl.MergeConflictError) as err:
        g.merge_many(["a", "b"], into="main")
    assert {c.kind for c in err.value.conflicts} == {"orphan_edge"}


def test_already_merged_sources_are_skipped(people: gl.Graph) -> None:
    g = people
    names = shards(g, 3)
    assert g.merge(names[0], into="main").outcome == "fast_forward"
    result = g.merge_many(names, into="main")
    assert result.outcome == "merged"
    assert g.head().parents[1:] == tuple(g.head(s).id for s in names[1:])
    assert g.merge_many(names, into="main").outcome == "already_up_to_date"
    g.create_branch("solo")
    with g.write("solo") as w:
        w.insert("Person", [{"name": "S"}])
    assert g.merge_many(["solo", names[0]], into="main").outcome == "fast_forward"


def test_deleting_merged_shards_leaves_trunk_readable(people: gl.Graph) -> None:
    g = people
    names = shards(g, 4)
    g.merge_many(names, into="main")
    expected = state(g)
    for name in names:
        g.delete_branch(name)
    assert g.branches() == ["main"]
    assert state(reopen(g)) == expected
    with g.write() as w:
        w.insert("Person", [{"name": "after"}])
    assert "after" in ids(g)


def test_bad_merge_many_input_changes_nothing(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    before = state(g)
    for args, error in [
        (([], "main"), gl.MergeError),
        ((["a", "a"], "main"), gl.MergeError),
        ((["a", "main"], "main"), gl.MergeError),
        ((["a", "nope"], "main"), gl.BranchNotFoundError),
        (("a", "main"), gl.MergeError),
    ]:
        with pytest.raises(error):
            g.merge_many(*args[:1], into=args[1])
    assert state(g) == before


def tree_bytes(root) -> int:
    from pathlib import Path

    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())


def test_insert_only_shards_are_adopted_without_copying_rows(tmp_path) -> None:
    import pyarrow as pa

    g = gl.Graph.init(
        tmp_path / "g", "node Doc { key: String @key  text: String  emb: Vector(32)? }"
    )
    with g.write() as w:  # the shards inherit fragments (with deletions) from main
        w.insert("Doc", [{"key": f"old{j}", "text": "old"} for j in range(3)])
    with g.write() as w:
        w.delete("Doc", ["old1"])
    names = [f"w{i}" for i in range(4)]
    for name in names:
        g.create_branch(name)
        n = 2_000
        g.load(
            pa.table(
                {
                    "key": [f"{name}-{j}" for j in range(n)],
                    "text": ["lorem ipsum " * 8] * n,
                    "emb": pa.array(
                        [[float(j)] * 32 for j in range(n)], pa.list_(pa.float32(), 32)
                    ),
                }
            ),
            branch=name,
            table="Doc",
        )
    shard_bytes = tree_bytes(tmp_path / "g" / "tables")
    before = tree_bytes(tmp_path / "g")
    result = g.merge_many(names, into="main", lineage="verify")
    written = tree_bytes(tmp_path / "g") - before
    stats = result.stats["Doc"]
    assert (stats.route, stats.adopted_rows, stats.effects) == ("insertion_replay", 8_000, 0)
    assert written < 0.05 * shard_bytes, (written, shard_bytes)
    assert g.nodes("Doc").num_rows == 8_002
    assert g.get("Doc", "w3-1999")["emb"][0] == 1999.0
    # Adopted rows are ordinary rows afterwards: update, delete, branch and merge again.
    with g.write() as w:
        w.update("Doc", [{"key": "w0-5", "text": "changed"}])
        w.delete("Doc", ["w1-7"])
    g.create_branch("later")
    with g.write("later") as w:
        w.update("Doc", [{"key": "w2-9", "text": "from later"}])
    with g.write() as w:
        w.insert("Doc", [{"key": "m", "text": "main"}])
    for name in names:
        g.delete_branch(name)
    r = g.merge("later", into="main", lineage="verify")
    assert (r.stats["Doc"].discovery, r.stats["Doc"].fallback) == ("verified", None)
    assert g.get("Doc", "w0-5")["text"] == "changed"
    assert g.get("Doc", "w1-7") is None
    assert g.get("Doc", "w2-9")["text"] == "from later"
    assert g.nodes("Doc").num_rows == 8_002  # one delete, one insert since the merge


def test_adopted_rows_are_indexed(tmp_path) -> None:
    from graphlake.storage import tables as T

    g = gl.Graph.init(tmp_path / "g", "node Doc { key: String @key  n: I64 }")
    for i in range(2):
        g.create_branch(f"w{i}")
    for i in range(2):
        rows = [{"key": f"w{i}-{j}", "n": j} for j in range(T.INDEX_APPEND_THRESHOLD // 2 + 1)]
        with g.write(f"w{i}") as w:
            w.insert("Doc", rows)
    with g.write() as w:  # main moves: a real merge, not a fast-forward
        w.insert("Doc", [{"key": "main", "n": 0}])
    result = g.merge_many(["w0", "w1"])
    assert result.stats["Doc"].adopted_rows == 2 * (T.INDEX_APPEND_THRESHOLD // 2 + 1)
    ds = g.repo.tables.open(g.head().tables["Doc"])
    assert T._unindexed_fragments(ds) == 0
    assert g.get("Doc", "w1-7")["n"] == 7
