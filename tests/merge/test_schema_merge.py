"""Merging branches whose schemas differ: the schemas merge three-way first (issue 13,
item 4), then the rows on the merged schema."""

from __future__ import annotations

import itertools

import pytest

import graphlake as gl
from graphlake.errors import MergeConflictError
from graphlake.merge import result as R
from tests.conftest import state

BASE = """
node Person { name: String @key  age: I32? }
node Company { name: String @key }
edge WorksAt: Person -> Company
"""
_names = itertools.count()


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    graph = gl.Graph.init(str(tmp_path_factory.mktemp("sm") / "g"), BASE)
    with graph.write(message="seed") as w:
        w.insert(
            "Person",
            [{"name": "Ann", "age": 30}, {"name": "Bob", "age": 40}, {"name": "Cy", "age": 50}],
        )
        w.insert("Company", [{"name": "Acme"}])
        w.insert("WorksAt", [{"id": "w1", "src": "Ann", "dst": "Acme"}])
    return graph


def _fork(g: gl.Graph) -> tuple[str, str]:
    n = next(_names)
    g.create_branch(f"s{n}", "main")
    g.create_branch(f"t{n}", "main")
    return f"s{n}", f"t{n}"


def _people(g: gl.Graph, branch: str) -> dict[str, dict]:
    return {r["name"]: r for r in g.snapshot(branch).read("Person").to_pylist()}


def test_disjoint_schema_changes_combine_and_rows_get_null(g: gl.Graph) -> None:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  nick: String?"), s)
    with g.write(s) as w:
        w.insert("Person", [{"name": "Dee", "nick": "d"}])
    g.apply_schema(
        BASE.replace(
            "node Company { name: String @key }", "node Company { name: String @key  url: String? }"
        ),
        t,
    )
    with g.write(t) as w:
        w.update("Company", [{"name": "Acme", "url": "acme.example"}])
    head = g.head(t).id
    dry = g.merge(s, into=t, dry_run=True)
    assert dry.outcome == R.MERGED and g.head(t).id == head
    assert g.schema_at(t).nodes["Person"].property("nick") is None
    r = g.merge(s, into=t)
    assert r.outcome == R.MERGED and not r.conflicts
    schema = g.schema_at(t)
    assert schema.nodes["Person"].property("nick") is not None
    assert schema.nodes["Company"].property("url") is not None
    people = _people(g, t)
    assert people["Dee"]["nick"] == "d" and people["Ann"]["nick"] is None
    assert g.get("Company", "Acme", branch=t)["url"] == "acme.example"
    # Reading an old commit returns what it returned before.
    assert "nick" not in g.snapshot("main").read("Person").column_names


def test_a_schema_only_branch_merges_into_a_target_that_changed_rows(g: gl.Graph) -> None:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  score: I64 @default(7)"), s)
    with g.write(t) as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
        w.insert("Person", [{"name": "Eve"}])
    r = g.merge(s, into=t)
    assert r.routes["Person"] == R.NO_CHANGE and r.stats["Person"].discovery == "schema"
    people = _people(g, t)
    assert people["Bob"]["age"] == 41 and people["Eve"]["score"] == 7
    assert people["Ann"]["score"] == 7


def test_same_property_added_differently_is_a_schema_conflict(g: gl.Graph) -> None:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  x: String?"), s)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  x: I64?"), t)
    head = g.head(t).id
    with pytest.raises(MergeConflictError) as e:
        g.merge(s, into=t)
    [c] = e.value.conflicts
    assert (c.kind, c.table, c.properties) == ("schema_conflict", "Person", ("x",))
    assert (c.source["type"], c.target["type"]) == ("String", "I64")
    dry = g.merge(s, into=t, dry_run=True)
    assert dry.outcome == R.CONFLICT and [x.kind for x in dry.conflicts] == ["schema_conflict"]
    assert g.head(t).id == head
    r = g.merge(s, into=t, strategy="theirs")
    assert [x.resolution for x in r.resolved] == ["theirs"]
    assert str(g.schema_at(t).nodes["Person"].property("x").type) == "String"


def test_drop_against_an_update_merges_as_the_drop_and_lists_the_values(g: gl.Graph) -> None:
    s, t = _fork(g)
    with g.write(s) as w:
        w.update("Person", [{"name": "Bob", "age": 44}])
    g.apply_schema(BASE.replace("age: I32?", ""), t, allow_drop=True)
    r = g.merge(s, into=t)
    assert "age" not in g.schema_at(t).nodes["Person"].property_names
    assert r.stats["Person"].dropped_values == {"age": {"count": 1, "values": {"Bob": 44}}}
    assert set(_people(g, t)) == {"Ann", "Bob", "Cy"}


def test_a_type_dropped_while_the_other_side_inserted_rows_conflicts(g: gl.Graph) -> None:
    s, t = _fork(g)
    no_company = "node Person { name: String @key  age: I32? }"
    g.apply_schema(no_company, t, allow_drop=True)
    with g.write(s) as w:
        w.insert("Company", [{"name": "Initech"}])
    with pytest.raises(MergeConflictError) as e:
        g.merge(s, into=t)
    assert {(c.kind, c.table) for c in e.value.conflicts} >= {("schema_conflict", "Company")}
    # Left alone on the other side, the drop stands.
    s2, t2 = _fork(g)
    g.apply_schema(no_company, t2, allow_drop=True)
    with g.write(s2) as w:
        w.update("Person", [{"name": "Cy", "age": 51}])
    g.merge(s2, into=t2)
    assert g.schema_at(t2).table_names == ("Person",)
    assert _people(g, t2)["Cy"]["age"] == 51


def test_a_constraint_added_on_one_side_is_checked_against_the_others_rows(g: gl.Graph) -> None:
    s, t = _fork(g)
    with g.write(s) as w:
        w.update("Person", [{"name": "Cy", "age": 40}])  # now equal to Bob's
    g.apply_schema(BASE.replace("node Person {", "node Person @unique(age) {"), t)
    with pytest.raises(MergeConflictError) as e:
        g.merge(s, into=t)
    assert {c.kind for c in e.value.conflicts} == {"unique_violation"}


def test_a_renamed_property_takes_the_other_sides_values(g: gl.Graph) -> None:
    s, t = _fork(g)
    with g.write(s) as w:
        w.update("Person", [{"name": "Ann", "age": 31}])
    g.apply_schema(BASE.replace("age: I32?", "years: I32? @renamed_from(age)"), t)
    g.merge(s, into=t)
    assert _people(g, t)["Ann"]["years"] == 31


def test_backfill_of_a_new_property_merges_column_wise(g: gl.Graph) -> None:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  emb: Vector(4)?"), s)
    with g.write(s) as w:
        w.set_property(
            "Person",
            "emb",
            [
                {"name": n, "emb": [1.0, 2.0, 3.0, float(i)]}
                for i, n in enumerate(["Ann", "Bob", "Cy"])
            ],
        )
    with g.write(t) as w:
        w.update("Person", [{"name": "Bob", "age": 42}])
    r = g.merge(s, into=t)
    assert r.routes["Person"] == R.COLUMN_WRITE
    people = _people(g, t)
    assert people["Bob"]["age"] == 42 and people["Bob"]["emb"] == [1.0, 2.0, 3.0, 1.0]
    assert people["Cy"]["emb"] == [1.0, 2.0, 3.0, 2.0]


def test_rows_changed_on_both_sides_across_a_column_change_merge(g: gl.Graph) -> None:
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  nick: String?"), s)
    with g.write(s) as w:
        w.update("Person", [{"name": "Ann", "nick": "a"}])
    with g.write(t) as w:
        w.update("Person", [{"name": "Bob", "age": 45}])
    g.merge(s, into=t)
    people = _people(g, t)
    assert (people["Ann"]["nick"], people["Bob"]["age"], people["Bob"]["nick"]) == ("a", 45, None)


def test_renames_compose_across_schema_commits(g: gl.Graph) -> None:
    s, t = _fork(g)
    with g.write(s) as w:
        w.update("Person", [{"name": "Cy", "age": 52}])
    g.apply_schema(BASE.replace("age: I32?", "years: I32? @renamed_from(age)"), t)
    g.apply_schema(BASE.replace("age: I32?", "yrs: I32? @renamed_from(years)"), t)
    g.merge(s, into=t)
    assert g.schema_at(t).nodes["Person"].property_names == ("name", "yrs")
    assert _people(g, t)["Cy"]["yrs"] == 52


def test_schema_merge_with_a_backfill_on_each_backend(graph: gl.Graph) -> None:
    from tests.conftest import SOCIAL, seed_people

    g = graph
    seed_people(g)
    g.create_branch("feat")
    g.apply_schema(
        SOCIAL.replace("age: I32? @range(0..150)", "age: I32? @range(0..150)  nick: String?"),
        "feat",
    )
    with g.write("feat") as w:
        w.set_property("Person", "nick", [{"name": "Alice", "nick": "al"}])
    g.apply_schema(
        SOCIAL.replace(
            "node Company { name: String @key", "node Company { name: String @key  url: String?"
        ),
        "main",
    )
    with g.write() as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    r = g.merge("feat", into="main")
    assert r.routes["Person"] == R.COLUMN_WRITE and not r.conflicts
    people = {p["name"]: p for p in g.nodes("Person").to_pylist()}
    assert (people["Alice"]["nick"], people["Bob"]["age"], people["Bob"]["nick"]) == (
        "al",
        41,
        None,
    )
    assert g.schema_at("main").nodes["Company"].property("url") is not None


def test_a_rename_merged_into_the_target_keeps_a_later_sources_updates(g: gl.Graph) -> None:
    """The target merged a rename (not a fast-forward); a source that updated the old
    property merges into the renamed one (renames are followed through every parent)."""
    s, t = _fork(g)
    renamer = f"{s}-rename"
    g.create_branch(renamer, "main")
    g.apply_schema(BASE.replace("age: I32?", "years: I32? @renamed_from(age)"), renamer)
    with g.write(t) as w:
        w.insert("Company", [{"name": "Initech"}])
    g.merge(renamer, into=t)
    with g.write(s) as w:
        w.update("Person", [{"name": "Ann", "age": 31}])
    r = g.merge(s, into=t)
    assert r.outcome == R.MERGED and not r.stats["Person"].dropped_values
    assert {k: p["years"] for k, p in _people(g, t).items()}["Ann"] == 31


def test_edges_merged_by_rows_are_checked_against_a_node_table_the_schema_merge_decided(
    g: gl.Graph,
) -> None:
    """Person is decided by the schema merge (only the source changed its schema), while
    both sides add WorksAt edges: their endpoints are checked against the merged Person
    (found by the oracle: the check looked Person up among the row-merged tables only)."""
    s, t = _fork(g)
    g.apply_schema(BASE.replace("age: I32?", "age: I32?  nick: String?"), s)
    with g.write(s) as w:
        w.insert("WorksAt", [{"id": f"{s}-w", "src": "Bob", "dst": "Acme"}])
    with g.write(t) as w:
        w.insert("WorksAt", [{"id": f"{t}-w", "src": "Cy", "dst": "Acme"}])
        w.update("Person", [{"name": "Ann", "age": 31}])
    r = g.merge(s, into=t)
    assert r.outcome == R.MERGED
    works = {e["id"] for e in g.snapshot(t).read("WorksAt").to_pylist()}
    assert {f"{s}-w", f"{t}-w"} <= works
    assert _people(g, t)["Ann"]["age"] == 31 and _people(g, t)["Ann"]["nick"] is None


@pytest.mark.parametrize("lineage", ["on", "off"])
def test_the_same_schema_change_on_both_sides_with_rows_on_both(g: gl.Graph, lineage: str) -> None:
    """Both sides made the same schema change (one schema id), then changed rows: the
    base's rows are in the old layout, so the schemas merge first (found by the oracle:
    the row routes compared the old layout's base with the new layout's sides)."""
    s, t = _fork(g)
    new = BASE.replace("age: I32?", "age: I32?  nick: String?")
    for side, person in ((s, "Ann"), (t, "Bob")):
        g.apply_schema(new, side)
        with g.write(side) as w:
            w.update("Person", [{"name": person, "nick": person.lower()}])
    assert g.head(s).schema_id == g.head(t).schema_id
    r = g.merge(s, into=t, lineage=lineage)
    assert r.outcome == R.MERGED
    assert {k: p["nick"] for k, p in _people(g, t).items()} == {
        "Ann": "ann",
        "Bob": "bob",
        "Cy": None,
    }


def test_a_node_the_source_deleted_while_the_target_kept_its_edge_is_an_orphan(tmp_path) -> None:
    """Person is decided by the schema merge (the source's rows: only it changed them);
    the source deleted Ann and her edge, the target updated that edge, and "ours" keeps
    it: the edge would point at a deleted node (found by the oracle)."""
    g = gl.Graph.init(
        str(tmp_path / "g"),
        BASE.replace(
            "edge WorksAt: Person -> Company", "edge WorksAt: Person -> Company { since: I32? }"
        ),
    )
    with g.write() as w:
        w.insert("Person", [{"name": "Ann"}, {"name": "Bob"}])
        w.insert("Company", [{"name": "Acme"}])
        w.insert("WorksAt", [{"id": "w1", "src": "Ann", "dst": "Acme"}])
    g.create_branch("s")
    g.create_branch("t")
    g.apply_schema(g.schema_text("s").replace("age: I32?", "age: I32?  nick: String?"), "s")
    with g.write("s") as w:
        w.delete("Person", ["Ann"], cascade=True)  # also removes w1
    with g.write("t") as w:
        w.update("WorksAt", [{"id": "w1", "since": 2020}])
    before = state(g, "t")
    with pytest.raises(MergeConflictError) as err:
        g.merge("s", into="t", strategy="ours")
    assert {(c.kind, c.entity_id) for c in err.value.conflicts} == {("orphan_edge", "w1")}
    assert state(g, "t") == before
