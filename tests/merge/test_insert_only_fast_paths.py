"""Adversarial histories for the insert-only fast paths of merge.

Lineage reads an insert-only path's rows straight from its new fragments when every base
fragment is still there unchanged (`storage.fragments.appended_fragments`); insert-only
deltas keep their keys columnar and overlap between sides is decided on key ranges or one
sort (`classify._all_distinct`); insertion replay and pointer adoption validate only the
checked columns. Each history below is built so that one of those shortcuts could be
fooled (compaction, delete then re-insert, a base row updated, a source that merged
another branch, chains of forks, a base on another Lance branch, deletion files on new
fragments, keys whose ranges mislead). Every merge runs with lineage "on", "off" (the
walk) and "verify", each into its own copy of the target: all three must agree, and
with the plain expectation the test spells out.
"""

from __future__ import annotations

import pytest

import graphlake as gl
from graphlake.merge.delta import DiscoverySettings, _verify, discover
from graphlake.storage import lineage as lin
from graphlake.storage.fragments import appended_fragments

MODES = ("on", "off", "verify")


def rows(g: gl.Graph, branch: str) -> dict:
    snap = g.snapshot(branch)
    return {
        t: sorted(snap.read(t).to_pylist(), key=lambda r: r["id"]) for t in g.schema.table_names
    }


def ids(g: gl.Graph, branch: str, table: str = "Person") -> set[str]:
    return set(g.nodes(table, branch=branch, columns=["id"]).column("id").to_pylist())


def merge_all_modes(g: gl.Graph, sources: list[str], into: str = "main", **kw):
    """Merge `sources` into a copy of `into` per lineage mode; the modes must agree.
    Returns (outcome, rows or conflicts, the "on" run's result or None)."""
    seen = {}
    first = None
    for mode in MODES:
        copy = f"{into}-{mode}-{len(g.branches())}"
        g.create_branch(copy, from_=into)
        before = rows(g, copy)
        try:
            if len(sources) == 1:
                r = g.merge(sources[0], into=copy, lineage=mode, **kw)
            else:
                r = g.merge_many(sources, into=copy, lineage=mode, **kw)
        except gl.MergeConflictError as exc:
            assert rows(g, copy) == before, "a conflicting merge changed the target"
            seen[mode] = ("conflict", sorted((c.kind, c.table, c.entity_id) for c in exc.conflicts))
            continue
        except gl.MergeError as exc:
            assert rows(g, copy) == before
            seen[mode] = ("refused", str(exc))
            continue
        seen[mode] = (r.outcome, rows(g, copy))
        if mode == "on":
            first = r
    assert seen["on"] == seen["off"] == seen["verify"], seen
    return (*seen["on"], first)


def expect_rows(g: gl.Graph, got: dict, **changes: dict) -> None:
    """`got` equals main's rows with `changes[table]` = {key: row or None} applied."""
    want = rows(g, "main")
    for table, by_key in changes.items():
        current = {r["id"]: r for r in want[table]}
        for key, row in by_key.items():
            if row is None:
                current.pop(key, None)
            else:
                current[key] = row
        want[table] = sorted(current.values(), key=lambda r: r["id"])
    assert got == want


def person(
    name: str, age: int | None = None, email: str | None = None, role: str | None = None
) -> dict:
    return {"id": name, "name": name, "age": age, "email": email, "role": role}


def insert(g: gl.Graph, branch: str, *people: dict) -> None:
    """One commit inserting `people` (rows as `person` builds them) on `branch`."""
    with g.write(branch) as w:
        w.insert("Person", [{k: v for k, v in p.items() if k != "id"} for p in people])


def lineage_agrees(
    g: gl.Graph, source: str, table: str = "Person", base_branch: str = "main"
) -> lin.LineageCandidates:
    """Lineage and the walk find the same delta from `base_branch`'s head to `source`'s."""
    base = g.head(base_branch).tables[table]
    side = g.head(source).tables[table]
    on = discover(g.repo.tables, base, side, DiscoverySettings(lineage="on"))
    off = discover(g.repo.tables, base, side, DiscoverySettings(lineage="off"))
    _verify(table, "source", on, off)
    return lin.candidates(g.repo.tables, base, side, lin.DEFAULT_CANDIDATE_BUDGET)


# --- two-branch histories ---------------------------------------------------------------


def test_compaction_on_the_source_branch(people: gl.Graph) -> None:
    """optimize on the source rewrites the base's fragments together with the new ones:
    the fragment shortcut must not apply, and the merge must not lose or duplicate rows."""
    g = people
    g.create_branch("dev")
    for i in range(3):
        insert(g, "dev", person(f"D{i}", age=i))
    with g.write("dev") as w:
        w.delete("Person", ["D1"])
    g.optimize("dev")
    base = g.repo.tables.open(g.head("main").tables["Person"])
    side = g.repo.tables.open(g.head("dev").tables["Person"])
    assert appended_fragments(base, side) is None  # the base's fragment was rewritten
    lineage_agrees(g, "dev")
    insert(g, "main", person("M0", age=9))
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged" and r.routes["Person"] == "insertion_replay"
    expect_rows(g, got, Person={"D0": person("D0", 0), "D2": person("D2", 2)})


def test_compaction_of_only_the_new_fragments(people: gl.Graph) -> None:
    """A base compacted on main before the fork, then the source's own small fragments
    compacted (with a deleted row among them): the base fragment stays, the shortcut
    applies and reads the compacted fragment's live rows."""
    g = people
    for i in range(3):
        insert(g, "main", person(f"B{i}"))
    g.optimize("main")
    g.create_branch("dev")
    for i in range(4):
        insert(g, "dev", person(f"D{i}", age=i))
    with g.write("dev") as w:
        w.delete("Person", ["D2"])
    g.optimize("dev")
    found = lineage_agrees(g, "dev")
    assert found.inserted is not None and found.count == 3
    with g.write("main") as w:
        w.insert("Company", [{"name": "Initech"}])  # the target moves, Person untouched
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged" and r.routes["Person"] == "pointer_adoption"
    expect_rows(g, got, Person={f"D{i}": person(f"D{i}", i) for i in (0, 1, 3)})


def test_source_that_only_optimized(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    for i in range(2):
        insert(g, "dev", person(f"D{i}"))
    g.create_branch("dev2", from_="dev")
    g.optimize("dev2")
    insert(g, "dev", person("D9"))
    before = rows(g, "dev")
    outcome, got, _ = merge_all_modes(g, ["dev2"], into="dev")
    # dev2's optimize commit is not in dev's history: recorded, with dev's rows unchanged.
    assert outcome == "merged" and got == before


@pytest.mark.parametrize("key", ["N1", "Carol"])
def test_delete_then_reinsert_of_one_key(people: gl.Graph, key: str) -> None:
    """A key inserted (or in the base), deleted, and inserted again with other values:
    one insert of the new row (new key) or an update (base key), never two rows."""
    g = people
    g.create_branch("dev")
    if key == "N1":
        insert(g, "dev", person("N1", age=1))
    with g.write("dev") as w:
        w.delete("Person", [key], cascade=True)
    insert(g, "dev", person(key, age=2))
    insert(g, "main", person("M0"))
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged"
    changes = {"Person": {key: person(key, 2)}}
    if key == "Carol":
        changes["Knows"] = {"k2": None}  # the cascade took Bob -> Carol
        assert r.routes["Person"] == "three_way"
    expect_rows(g, got, **changes)


def test_update_of_a_base_row_next_to_inserts(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    insert(g, "dev", person("D0"))
    with g.write("dev") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    insert(g, "dev", person("D1"))
    found = lineage_agrees(g, "dev")
    assert found.inserted is None and found.keys == {"D0", "D1", "Bob"}
    insert(g, "main", person("M0"))
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged" and r.routes["Person"] == "three_way"
    expect_rows(g, got, Person={"D0": person("D0"), "D1": person("D1"), "Bob": person("Bob", 41)})


def test_identical_upsert_of_a_base_row_is_no_change(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.upsert("Person", [{"name": "Bob", "age": 40}])  # the base's values again
        w.insert("Person", [{"name": "D0"}])
    insert(g, "main", person("M0"))
    outcome, got, _ = merge_all_modes(g, ["dev"])
    assert outcome == "merged"
    expect_rows(g, got, Person={"D0": person("D0")})


def test_source_that_merged_another_branch(people: gl.Graph) -> None:
    """dev merged side (insert-only both): dev's Person state is a merge result on its
    own Lance branch; from main's base, dev still only added rows."""
    g = people
    g.create_branch("side")
    g.create_branch("dev")
    insert(g, "side", person("S0", age=1), person("S1"))
    insert(g, "dev", person("D0"))
    assert g.merge("side", into="dev").outcome == "merged"
    insert(g, "dev", person("D1"))
    lineage_agrees(g, "dev")
    insert(g, "main", person("M0"))
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged" and r.routes["Person"] == "insertion_replay"
    expect_rows(
        g, got, Person={k: person(k, 1 if k == "S0" else None) for k in ("S0", "S1", "D0", "D1")}
    )
    # And the other way round: main (with its own insert) into side.
    g.merge("dev", into="main")
    assert merge_all_modes(g, ["main"], into="side")[0] == "fast_forward"


def test_source_that_merged_an_adopted_shard_set(people: gl.Graph) -> None:
    """main adopted two shards' fragments by reference (merge_many); a branch forked
    before that then merges main: main's new fragments live under other Lance branches'
    roots, and are read from there."""
    g = people
    g.create_branch("dev")
    for name in ("a", "b"):
        g.create_branch(name)
        insert(g, name, *[person(f"{name}{i}", age=i) for i in range(3)])
    insert(g, "main", person("M0"))
    r = g.merge_many(["a", "b"], into="main")
    assert r.routes["Person"] == "insertion_replay" and r.stats["Person"].adopted_rows == 6
    insert(g, "dev", person("D0"))
    outcome, got, r = merge_all_modes(g, ["main"], into="dev")
    assert outcome == "merged"
    want = {p["id"] for p in rows(g, "main")["Person"]} | {"D0"}
    assert {p["id"] for p in got["Person"]} == want
    assert next(p for p in got["Person"] if p["id"] == "b2")["age"] == 2
    # Then main compacted (adopted fragments rewritten), merged into a fresh fork.
    g.create_branch("dev2", from_="dev")
    g.optimize("main")
    insert(g, "dev2", person("D9"))
    outcome, got, _ = merge_all_modes(g, ["main"], into="dev2")
    assert {p["id"] for p in got["Person"]} == want | {"D9"}


def test_chain_of_insert_only_forks(people: gl.Graph) -> None:
    g = people
    prev = "main"
    for i in range(4):
        g.create_branch(f"c{i}", from_=prev)
        insert(g, f"c{i}", person(f"C{i}", age=i))
        prev = f"c{i}"
    found = lineage_agrees(g, "c3")
    assert found.inserted is not None and found.keys == {"C0", "C1", "C2", "C3"}
    insert(g, "main", person("C25"))  # inside the source's key range
    outcome, got, r = merge_all_modes(g, ["c3"])
    assert outcome == "merged" and r.routes["Person"] == "insertion_replay"
    expect_rows(g, got, Person={f"C{i}": person(f"C{i}", i) for i in range(4)})


def test_base_state_on_another_lance_branch(people: gl.Graph) -> None:
    """main fast-forwards to dev, so main's Person state lives on dev's Lance branch; a
    later fork of main is then based on a state of another Lance branch."""
    g = people
    g.create_branch("dev")
    insert(g, "dev", person("D0"))
    assert g.merge("dev", into="main").outcome == "fast_forward"
    g.create_branch("x")
    insert(g, "x", person("X0", age=3))
    insert(g, "dev", person("D1"))  # dev's Lance branch moves on past the base
    with g.write("x") as w:
        w.insert("Knows", [{"id": "kx", "src": "X0", "dst": "D0"}])
    lineage_agrees(g, "x")
    insert(g, "main", person("M0"))
    outcome, got, _ = merge_all_modes(g, ["x"])
    assert outcome == "merged"
    expect_rows(
        g,
        got,
        Person={"X0": person("X0", 3)},
        Knows={"kx": {"id": "kx", "src": "X0", "dst": "D0", "since": None}},
    )


def test_deletion_files_on_new_fragments(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    insert(g, "dev", *[person(f"D{i}", age=i) for i in range(5)])
    with g.write("dev") as w:
        w.delete("Person", ["D1", "D3"])
    found = lineage_agrees(g, "dev")
    assert found.count == 3
    insert(g, "main", person("M0"))
    outcome, got, r = merge_all_modes(g, ["dev"])
    assert outcome == "merged" and r.stats["Person"].adopted_rows == 0  # a deletion file
    expect_rows(g, got, Person={f"D{i}": person(f"D{i}", i) for i in (0, 2, 4)})


@pytest.mark.parametrize("same", [True, False])
def test_target_inserting_the_same_key(people: gl.Graph, same: bool) -> None:
    g = people
    g.create_branch("dev")
    insert(g, "dev", person("A0"), person("Zed", age=1))
    insert(g, "main", person("Zed", age=1 if same else 2), person("M0"))
    outcome, got, _ = merge_all_modes(g, ["dev"])
    if same:
        assert outcome == "merged"
        expect_rows(g, got, Person={"A0": person("A0")})
    else:
        assert got == [("divergent_insert", "Person", "Zed")]


def test_unique_and_card_against_the_target(people: gl.Graph) -> None:
    """The target inserted too (so insertion replay): the source's rows, read as their
    checked columns only, must still clash with the target's."""
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Person", [{"name": "D0", "email": "same@x.org"}, {"name": "D1"}])
        w.insert("WorksAt", [{"id": "wd", "src": "Bob", "dst": "Acme"}])
    with g.write("main") as w:
        w.insert("Person", [{"name": "M0", "email": "same@x.org"}])
        w.insert("WorksAt", [{"id": "wm", "src": "Bob", "dst": "Acme"}])
    outcome, got, _ = merge_all_modes(g, ["dev"])
    assert outcome == "conflict"
    assert {(k, t) for k, t, _ in got} == {
        ("unique_violation", "Person"),
        ("cardinality_violation", "WorksAt"),
    }


def test_pointer_adoption_checks_edges_against_a_target_delete(people: gl.Graph) -> None:
    """The source only inserted edges (pointer adoption of Knows, columnar plan); the
    target deleted an endpoint: an orphan edge."""
    g = people
    g.create_branch("dev")
    with g.write("dev") as w:
        w.insert("Knows", [{"id": "kc", "src": "Carol", "dst": "Alice"}])
    with g.write("main") as w:
        w.delete("Person", ["Carol"], cascade=True)
    outcome, got, _ = merge_all_modes(g, ["dev"])
    assert outcome == "conflict" and ("orphan_edge", "Knows", "kc") in got


# --- N-way: key ranges that could mislead ---------------------------------------------------

LAYOUTS = {
    # shard -> keys; the expected shared key (None: all distinct)
    "prefixes": ({"a": ["p", "pa", "pab"], "b": ["pa0", "paa"], "c": ["pb"]}, None),
    "prefix-shared": ({"a": ["p", "pa"], "b": ["pa", "pab"]}, "pa"),
    "max-is-min": ({"a": ["b", "d"], "b": ["d", "f"]}, "d"),
    "touching-not-shared": ({"a": ["b", "d"], "b": ["d\x01", "f"]}, None),
    "nested-range": ({"a": ["a", "z"], "b": ["m"]}, None),
    "nested-shared": ({"a": ["a", "m", "z"], "b": ["m"]}, "m"),
    "unicode": ({"a": ["é", "ö"], "b": ["e", "z"], "c": ["Ω", "😀"]}, None),
    "unicode-shared": ({"a": ["é", "😀"], "b": ["Ω", "😀"]}, "😀"),
    "case": ({"a": ["Key", "key"], "b": ["KEY", "kEy"]}, None),
    "one-each": ({"a": ["q"], "b": ["q"]}, "q"),
    "empty-shard": ({"a": ["x1", "x2"], "b": [], "c": ["x0"]}, None),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_shard_key_ranges_that_could_mislead(people: gl.Graph, layout: str) -> None:
    g = people
    shards, shared = LAYOUTS[layout]
    for name, keys in shards.items():
        g.create_branch(name)
        if keys:
            insert(g, name, *[person(k, age=len(name)) for k in keys])
    names = list(shards)
    # strict_disjoint names the shared key; without it, equal rows converge.
    outcome, got, r = merge_all_modes(g, names, strict_disjoint=True)
    if shared is None:
        want = {k for ks in shards.values() for k in ks}
        assert outcome == "merged" and r.routes["Person"] == "insertion_replay"
        assert {p["id"] for p in got["Person"]} == want | {"Alice", "Bob", "Carol"}
        assert len(got["Person"]) == len(want) + 3
    else:
        assert outcome == "refused" and repr(shared) in got
        outcome, got, r = merge_all_modes(g, names)
        assert outcome == "merged" and r.routes["Person"] == "three_way"
        assert [p["id"] for p in got["Person"]].count(shared) == 1


def test_shared_key_with_different_rows_across_shards(people: gl.Graph) -> None:
    g = people
    for name, age in (("a", 1), ("b", 2)):
        g.create_branch(name)
        insert(g, name, person(f"{name}0"), person("zz", age=age))
    outcome, got, _ = merge_all_modes(g, ["a", "b"])
    assert outcome == "conflict" and got == [("divergent_insert", "Person", "zz")]


def test_target_key_equal_to_a_shard_bound(people: gl.Graph) -> None:
    """The target inserted a key equal to one shard's min and another's max."""
    g = people
    for name, keys in (("a", ["k1", "k5"]), ("b", ["k5x", "k9"])):
        g.create_branch(name)
        insert(g, name, *[person(k) for k in keys])
    insert(g, "main", person("k5x", age=7))
    outcome, got, _ = merge_all_modes(g, ["a", "b"])
    assert outcome == "conflict" and got == [("divergent_insert", "Person", "k5x")]
    outcome, got, _ = merge_all_modes(g, ["a", "b"], strict_disjoint=True)
    assert outcome == "conflict"  # the shards are disjoint; the target clash remains


def test_shards_with_zero_net_changes_and_nulls(people: gl.Graph) -> None:
    g = people
    g.create_branch("a")
    g.create_branch("b")
    g.create_branch("c")
    insert(g, "a", person("n1"), person("n2", email=None, role=None))
    insert(g, "b", person("n0"))
    with g.write("b") as w:
        w.delete("Person", ["n0"])  # b nets to nothing
    insert(g, "c", person("n3", age=None, email="c@x.org"))
    insert(g, "main", person("n15"))
    outcome, got, r = merge_all_modes(g, ["a", "b", "c"], strict_disjoint=True)
    assert outcome == "merged" and r.routes["Person"] == "insertion_replay"
    expect_rows(
        g, got, Person={"n1": person("n1"), "n2": person("n2"), "n3": person("n3", email="c@x.org")}
    )


def test_edges_and_unique_across_shards(people: gl.Graph) -> None:
    g = people
    for name in ("a", "b"):
        g.create_branch(name)
    with g.write("a") as w:
        w.insert("Person", [{"name": "A1", "email": "dup@x.org"}])
        w.insert("Knows", [{"id": "ka", "src": "A1", "dst": "Carol"}])
    with g.write("b") as w:
        w.insert("Person", [{"name": "B1", "email": "dup@x.org"}])
        w.delete("Person", ["Carol"], cascade=True)
    outcome, got, _ = merge_all_modes(g, ["a", "b"])
    assert outcome == "conflict"
    assert {(k, t) for k, t, _ in got} == {("unique_violation", "Person"), ("orphan_edge", "Knows")}
