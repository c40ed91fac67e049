"""Three-way schema merge: every rule of issue 13 item 4 over small schemas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlake.merge.conflicts import Conflict
from graphlake.schema import EdgeType, NodeType, Property, Schema, TypeRef, parse_schema
from graphlake.schema.merge3 import (
    OURS,
    SCHEMA_CONFLICT,
    THEIRS,
    SchemaSide,
    merge_schemas,
    resolve_dropped_type,
)

BASE = """
node Person { name: String @key  age: I32? }
node Company { name: String @key }
edge WorksAt: Person -> Company
"""


def pg(text: str) -> Schema:
    return parse_schema(text)


def props(schema: Schema, table: str) -> dict[str, str]:
    t = schema.table(table)
    assert t is not None, f"{table} missing from {schema.table_names}"
    return {p.name: f"{p.type}{'?' if p.nullable else ''}" for p in t.properties}


def same(a: Schema, b: Schema) -> bool:
    return a.nodes == b.nodes and a.edges == b.edges


def conflicts(
    ours: str | Schema | SchemaSide,
    theirs: str | Schema | SchemaSide,
    base: str = BASE,
    strategy: str | None = None,
) -> list[Conflict]:
    r = merge_schemas(pg(base), _side(ours), _side(theirs), strategy)
    return r.resolved if strategy else r.conflicts


def _side(s: str | Schema | SchemaSide) -> Schema | SchemaSide:
    return pg(s) if isinstance(s, str) else s


# --- combining, converging, taking the other side --------------------------------------


def test_disjoint_property_adds_combine() -> None:
    ours = BASE.replace("age: I32?", "age: I32?  email: String?")
    theirs = BASE.replace(
        "node Company { name: String @key }", "node Company { name: String @key  url: String? }"
    )
    r = merge_schemas(pg(BASE), pg(ours), pg(theirs))
    assert r.conflicts == []
    assert props(r.schema, "Person") == {"name": "String", "age": "I32?", "email": "String?"}
    assert props(r.schema, "Company") == {"name": "String", "url": "String?"}


def test_identical_changes_converge() -> None:
    both = (
        BASE.replace("age: I32?", "age: I64?  email: String? @unique")
        + "node City { name: String @key }"
    )
    r = merge_schemas(pg(BASE), pg(both), pg(both))
    assert r.conflicts == [] and same(r.schema, pg(both))


@pytest.mark.parametrize(
    "changed",
    [
        BASE.replace("age: I32?", "age: I64?"),
        BASE.replace("age: I32?", ""),
        BASE + "node City { name: String @key }",
        BASE.replace("edge WorksAt: Person -> Company", ""),
        BASE.replace("node Person {", "node Person @unique(age) {"),
        BASE.replace("-> Company", "-> Company @card(0..1)"),
    ],
)
def test_a_side_that_changed_nothing_takes_the_other(changed: str) -> None:
    for ours, theirs in ((BASE, changed), (changed, BASE)):
        r = merge_schemas(pg(BASE), pg(ours), pg(theirs))
        assert r.conflicts == [] and same(r.schema, pg(changed))


def test_disjoint_type_adds_and_constraints_combine() -> None:
    ours = BASE + "node City { name: String @key }"
    theirs = (
        BASE.replace("node Person {", "node Person @index(age) {") + "edge Owns: Company -> Company"
    )
    r = merge_schemas(pg(BASE), pg(ours), pg(theirs))
    assert r.conflicts == []
    assert set(r.schema.table_names) == {"Person", "Company", "City", "WorksAt", "Owns"}
    assert r.schema.nodes["Person"].indexes == (("age",),)


# --- conflicts -------------------------------------------------------------------------


def test_same_property_added_with_different_types_conflicts() -> None:
    ours = BASE.replace("age: I32?", "age: I32?  email: String?")
    theirs = BASE.replace("age: I32?", "age: I32?  email: I64?")
    [c] = conflicts(ours, theirs)
    assert c.kind == SCHEMA_CONFLICT and c.table == "Person" and c.properties == ("email",)
    assert c.base is None
    assert c.target["type"] == "String" and c.source["type"] == "I64"


def test_same_property_added_with_different_constraints_conflicts() -> None:
    ours = BASE.replace("age: I32?", "age: I32?  email: String?")
    theirs = BASE.replace("age: I32?", "age: I32?  email: String? @unique")
    [c] = conflicts(ours, theirs)
    assert c.properties == ("email",) and c.source["unique"] == [["email"]]
    assert c.target["unique"] == []


def test_property_changed_differently_conflicts() -> None:
    [c] = conflicts(BASE.replace("age: I32?", "age: I64?"), BASE.replace("age: I32?", "age: I32"))
    assert c.properties == ("age",) and "changed differently" in c.message
    assert c.base["type"] == "I32" and c.base["nullable"] is True


def test_renamed_differently_conflicts() -> None:
    ours = SchemaSide(
        pg(BASE.replace("age: I32?", "years: I32?")), prop_renames={("Person", "years"): "age"}
    )
    theirs = SchemaSide(
        pg(BASE.replace("age: I32?", "age_y: I32?")), prop_renames={("Person", "age_y"): "age"}
    )
    [c] = conflicts(ours, theirs)
    assert "renamed differently" in c.message
    assert (c.target["name"], c.source["name"], c.base["name"]) == ("years", "age_y", "age")


def test_rename_on_one_side_combines_with_a_retype_on_the_other() -> None:
    ours = SchemaSide(
        pg(BASE.replace("age: I32?", "years: I32?")), prop_renames={("Person", "years"): "age"}
    )
    r = merge_schemas(pg(BASE), ours, pg(BASE.replace("age: I32?", "age: I64?")))
    assert r.conflicts == []
    assert props(r.schema, "Person") == {"name": "String", "years": "I64?"}
    assert r.columns[THEIRS]["Person"] == ("Person", {"name": "name", "age": "years"})
    assert r.columns[OURS]["Person"] == ("Person", {"name": "name", "years": "years"})


def test_rename_without_annotation_is_a_drop_and_an_add() -> None:
    # No rename map: "years" is new and "age" dropped on ours, "age" retyped on theirs.
    [c] = conflicts(
        BASE.replace("age: I32?", "years: I32?"), BASE.replace("age: I32?", "age: I64?")
    )
    assert "dropped on the target and changed on the source" in c.message


@pytest.mark.parametrize(
    "other, what",
    [
        (
            SchemaSide(
                pg(BASE.replace("age: I32?", "years: I32?")),
                prop_renames={("Person", "years"): "age"},
            ),
            "renamed",
        ),
        (pg(BASE.replace("age: I32?", "age: F64?")), "changed"),
    ],
)
def test_dropped_vs_renamed_or_retyped_conflicts(other: Schema | SchemaSide, what: str) -> None:
    dropped = pg(BASE.replace("age: I32?", ""))
    [c] = conflicts(dropped, other)
    assert f"dropped on the target and {what} on the source" in c.message
    assert c.target is None and c.source is not None
    [c] = conflicts(other, dropped)
    assert f"dropped on the source and {what} on the target" in c.message


def test_drop_against_unchanged_merges_as_the_drop_and_is_listed() -> None:
    r = merge_schemas(pg(BASE), pg(BASE), pg(BASE.replace("age: I32?", "")))
    assert r.conflicts == [] and "age" not in props(r.schema, "Person")
    [d] = r.dropped_properties
    assert (d.table, d.prop, d.dropped_by) == ("Person", "age", THEIRS)
    assert "age" not in r.columns[OURS]["Person"][1]


def test_types_renamed_differently_conflict_and_one_rename_follows_edges() -> None:
    ours = SchemaSide(
        pg(BASE.replace("node Company", "node Firm").replace("-> Company", "-> Firm")),
        type_renames={"Firm": "Company"},
    )
    theirs = SchemaSide(
        pg(BASE.replace("node Company", "node Org").replace("-> Company", "-> Org")),
        type_renames={"Org": "Company"},
    )
    cs = conflicts(ours, theirs)
    assert any("renamed differently" in c.message and c.table == "Company" for c in cs)
    # One rename only: the other side's new edge to the old name follows it.
    r = merge_schemas(pg(BASE), ours, pg(BASE + "edge Likes: Person -> Company"))
    assert r.conflicts == []
    assert set(r.schema.nodes) == {"Person", "Firm"}
    assert (r.schema.edges["Likes"].src, r.schema.edges["Likes"].dst) == ("Person", "Firm")
    assert r.columns[THEIRS]["Company"][0] == "Firm"


def test_type_dropped_vs_changed_conflicts() -> None:
    dropped = BASE.replace("node Company { name: String @key }", "").replace(
        "edge WorksAt: Person -> Company", ""
    )
    changed = BASE.replace(
        "node Company { name: String @key }", "node Company { name: String @key  url: String? }"
    )
    cs = conflicts(dropped, changed)
    assert any(
        c.table == "Company" and "dropped on the target and changed" in c.message for c in cs
    )


def test_edge_added_to_a_type_the_other_side_dropped_conflicts() -> None:
    dropped = BASE.replace("node Company { name: String @key }", "").replace(
        "edge WorksAt: Person -> Company", ""
    )
    added = BASE + "edge Owns: Person -> Company"
    cs = conflicts(dropped, added)
    assert any(c.table == "Owns" and "needs node type 'Company'" in c.message for c in cs)
    r = merge_schemas(pg(BASE), pg(dropped), pg(added), strategy=THEIRS)
    assert {"Company", "Owns"} <= set(r.schema.table_names)
    r = merge_schemas(pg(BASE), pg(dropped), pg(added), strategy=OURS)
    assert not {"Company", "Owns", "WorksAt"} & set(r.schema.table_names)


def test_same_name_for_different_things_conflicts() -> None:
    ours = SchemaSide(
        pg(BASE.replace("age: I32?", "email: I32?")), prop_renames={("Person", "email"): "age"}
    )
    theirs = pg(BASE.replace("age: I32?", "age: I32?  email: String?"))
    cs = conflicts(ours, theirs)
    assert any("both sides use the name Person.email" in c.message for c in cs)


def test_type_added_as_node_and_as_edge_conflicts() -> None:
    [c] = conflicts(BASE + "node X { k: String @key }", BASE + "edge X: Person -> Person")
    assert "node type on one side and as an edge type" in c.message


def test_range_changed_differently_conflicts_and_added_constraints_are_listed() -> None:
    ours = BASE.replace("node Person {", "node Person @range(age, 0..150) {")
    theirs = BASE.replace("node Person {", "node Person @range(age, 0..120) {")
    [c] = conflicts(ours, theirs)
    assert c.properties == ("age",) and "@range" in c.message
    r = merge_schemas(
        pg(BASE), pg(ours), pg(BASE.replace("node Person {", "node Person @unique(age) {"))
    )
    kinds = {(a.table, a.kind, a.properties, a.added_by) for a in r.added_constraints}
    assert kinds == {("Person", "range", ("age",), OURS), ("Person", "unique", ("age",), THEIRS)}


def test_not_null_on_one_side_is_an_added_constraint() -> None:
    r = merge_schemas(pg(BASE), pg(BASE), pg(BASE.replace("age: I32?", "age: I32")))
    assert r.conflicts == []
    assert [(a.kind, a.properties, a.added_by) for a in r.added_constraints] == [
        ("not_null", ("age",), THEIRS)
    ]


# --- strategies ------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", [OURS, THEIRS])
def test_strategy_takes_that_sides_definition(strategy: str) -> None:
    ours = pg(BASE.replace("age: I32?", "age: I64?  email: String?"))
    theirs = pg(BASE.replace("age: I32?", "age: I32  email: I64?"))
    r = merge_schemas(pg(BASE), ours, theirs, strategy=strategy)
    assert r.conflicts == [] and len(r.resolved) == 2
    assert all(c.resolution == strategy for c in r.resolved)
    winner = ours if strategy == OURS else theirs
    assert r.schema.nodes["Person"] == winner.nodes["Person"]


def test_strategy_on_drop_vs_change() -> None:
    dropped, changed = pg(BASE.replace("age: I32?", "")), pg(BASE.replace("age: I32?", "age: I64?"))
    assert "age" not in props(merge_schemas(pg(BASE), dropped, changed, OURS).schema, "Person")
    assert (
        props(merge_schemas(pg(BASE), dropped, changed, THEIRS).schema, "Person")["age"] == "I64?"
    )


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError):
        merge_schemas(pg(BASE), pg(BASE), pg(BASE), strategy="mine")


# --- a dropped type needs the engine's data check --------------------------------------


def test_dropped_type_returns_a_data_check_and_its_outcomes() -> None:
    dropped = pg(
        BASE.replace("node Company { name: String @key }", "").replace(
            "edge WorksAt: Person -> Company", ""
        )
    )
    r = merge_schemas(pg(BASE), dropped, pg(BASE))
    assert r.conflicts == [] and set(r.schema.table_names) == {"Person"}
    by_table = {c.table: c for c in r.dropped_type_checks}
    assert set(by_table) == {"Company", "WorksAt"}
    company = by_table["Company"]
    assert company.dropped_by == OURS and [e.name for e in company.edges] == ["WorksAt"]
    # The keeping side inserted nothing: the drop stands.
    resolve_dropped_type(r, company, inserted=False, strategy=None)
    assert r.conflicts == [] and "Company" not in r.schema.table_names
    # It did: a schema conflict; "theirs" (the keeper) restores the type and its edges.
    resolve_dropped_type(r, company, inserted=True, strategy=None)
    assert [c.kind for c in r.conflicts] == [SCHEMA_CONFLICT]
    r2 = merge_schemas(pg(BASE), dropped, pg(BASE))
    resolve_dropped_type(r2, r2.dropped_type_checks[0], inserted=True, strategy=THEIRS)
    assert set(r2.schema.table_names) == {"Person", "Company", "WorksAt"}
    assert r2.resolved[0].resolution == THEIRS


# --- properties over generated histories -----------------------------------------------

KINDS = ("String", "I32", "I64", "F64")
NAMES = ("a", "b", "c", "d")


@st.composite
def tables(draw: st.DrawFn) -> dict[str, Property]:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=4))
    return {
        n: Property(n, TypeRef(draw(st.sampled_from(KINDS))), draw(st.booleans())) for n in names
    }


def schema_of(ps: dict[str, Property]) -> Schema:
    node = NodeType("T", (Property("k", TypeRef("String")), *ps.values()), key="k")
    return Schema({"T": node}, {})


@settings(max_examples=150, deadline=None)
@given(tables(), tables(), tables())
def test_generated_three_way_laws(b: dict, o: dict, t: dict) -> None:
    base, ours, theirs = schema_of(b), schema_of(o), schema_of(t)
    r = merge_schemas(base, ours, theirs)
    # Symmetry: swapping sides gives the same schema and the same conflicting names.
    s = merge_schemas(base, theirs, ours)
    assert {c.properties for c in r.conflicts} == {c.properties for c in s.conflicts}
    if not r.conflicts:
        assert set(props(r.schema, "T")) == set(props(s.schema, "T"))
    # Each property: a clean result follows the three-way rule exactly.
    merged = props(r.schema, "T")
    clashing = {p for c in r.conflicts for p in c.properties}
    for n in set(b) | set(o) | set(t):
        if n in clashing:
            continue
        bo, oo, to = b.get(n), o.get(n), t.get(n)
        expected = oo if oo == to else (to if oo == bo else oo)
        assert (n in merged) == (expected is not None)
    # Idempotence and identity.
    assert same(merge_schemas(base, ours, ours).schema, ours)
    assert same(merge_schemas(base, base, theirs).schema, theirs)
    assert merge_schemas(base, ours, base).conflicts == []
    # Either strategy always resolves everything.
    for strategy in (OURS, THEIRS):
        assert merge_schemas(base, ours, theirs, strategy).conflicts == []


def test_edge_types_compare_across_a_rename_of_their_endpoint() -> None:
    ours = SchemaSide(
        pg(BASE.replace("node Company", "node Firm").replace("-> Company", "-> Firm")),
        type_renames={"Firm": "Company"},
    )
    r = merge_schemas(pg(BASE), ours, pg(BASE))
    assert r.conflicts == [] and isinstance(r.schema.edges["WorksAt"], EdgeType)
    assert r.schema.edges["WorksAt"].dst == "Firm"


def test_renamed_from_annotations_give_identity_and_do_not_survive() -> None:
    ours = pg(BASE.replace("age: I32?", "years: I32? @renamed_from(age)"))
    theirs = pg(
        BASE.replace("node Company {", "node Firm @renamed_from(Company) {")
        .replace("-> Company", "-> Firm")
        .replace("age: I32?", "age: I64?")
    )
    r = merge_schemas(pg(BASE), ours, theirs)
    assert r.conflicts == []
    assert props(r.schema, "Person") == {"name": "String", "years": "I64?"}
    assert set(r.schema.nodes) == {"Person", "Firm"} and r.schema.edges["WorksAt"].dst == "Firm"
    assert r.schema.nodes["Person"].property("years").renamed_from is None
    assert r.schema.nodes["Firm"].renamed_from is None
    # The same annotated text on both sides converges.
    assert merge_schemas(pg(BASE), ours, ours).conflicts == []


def test_same_property_added_with_different_defaults_conflicts() -> None:
    [c] = conflicts(
        BASE.replace("age: I32?", "age: I32?  n: I64 @default(1)"),
        BASE.replace("age: I32?", "age: I32?  n: I64 @default(2)"),
    )
    assert (c.target["default"], c.source["default"]) == ("1", "2")


# --- search indexes (issue 15) merge like constraints -------------------------------------

DOCS = "node Doc { name: String @key  title: String?  v: Vector(2)? }"


def test_search_indexes_added_on_each_side_combine() -> None:
    ours = DOCS.replace("}", "@search(title) }")
    theirs = DOCS.replace("}", '@index(v, metric="l2") }')
    r = merge_schemas(pg(DOCS), pg(ours), pg(theirs))
    assert r.conflicts == []
    doc = r.schema.table("Doc")
    assert doc is not None and doc.search == ("title",) and doc.vector_indexes == {"v": "l2"}
    dropped = merge_schemas(pg(ours), pg(DOCS), pg(ours))  # one side removed @search
    assert dropped.schema.table("Doc").search == ()


def test_an_index_metric_changed_differently_conflicts() -> None:
    base = DOCS.replace("}", "@index(v) }")
    ours = DOCS.replace("}", '@index(v, metric="l2") }')
    theirs = DOCS.replace("}", '@index(v, metric="dot") }')
    (c,) = conflicts(ours, theirs, base)
    assert c.kind == SCHEMA_CONFLICT and "vector_index" in str(c.to_dict())
    assert len(conflicts(ours, theirs, base, strategy="theirs")) == 1  # resolved
    assert merge_schemas(pg(base), pg(ours), pg(theirs), "theirs").schema.table(
        "Doc"
    ).vector_indexes == {"v": "dot"}
