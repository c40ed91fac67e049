"""The registry of constraint kinds (`schema/annotations.py`): every registered kind
parses, prints and parses back, diffs and merges three-way through its one description,
and a table's constraints are one typed list in canonical order. A schema the earlier
printer stored still loads to the same list and prints back byte for byte."""

from __future__ import annotations

from datetime import date

import pytest

import graphlake as gl
from graphlake.schema import CONSTRAINT_KINDS, Cardinality, Constraint, ConstraintKind, Range
from graphlake.schema.annotations import KINDS, SYNTAX
from graphlake.schema.changes import (
    AddConstraint,
    Cost,
    DropConstraint,
    StepConstraint,
    schema_changes,
)
from graphlake.schema.merge3 import merge_schemas
from graphlake.schema.parser import KNOWN_ANNOTATIONS, parse_schema
from graphlake.schema.text import schema_text

# Per kind: two different declarations of it (the second changes the first's value, or
# for set-merged kinds adds another member), and the table they go on.
SAMPLES: dict[ConstraintKind, tuple[str, str, str]] = {
    "unique": ("Doc", "@unique(title, score)", "@unique(title)"),
    "index": ("Doc", "@index(title)", "@index(score, title)"),
    "range": ("Doc", "@range(score, 0.0..1.0)", "@range(score, 0.0..2.0)"),
    "check": ("Doc", '@check(title, "[a-z]+")', '@check(title, "[a-z]*")'),
    "vector_index": ("Doc", '@index(embedding, metric="l2")', '@index(embedding, metric="dot")'),
    "search": ("Doc", "@search(title)", "@search(body)"),
    "card": ("Tagged", "@card(0..3)", "@card(1..3)"),
}


def _schema(table: str = "", annotation: str = "") -> str:
    doc = annotation if table == "Doc" else ""
    edge = annotation if table == "Tagged" else ""
    return f"""
node Doc {{
    slug: String @key
    title: String
    body: String?
    score: F64?
    embedding: Vector(4)?
    {doc}
}}
node Tag {{ name: String @key }}
edge Tagged: Doc -> Tag {{ {edge} }}
"""


def _only(kind: ConstraintKind, which: int = 1) -> tuple[str, Constraint]:
    table, *written = SAMPLES[kind]
    [c] = parse_schema(_schema(table, written[which - 1])).require(table).constraints
    return table, c


def test_every_kind_has_one_description_and_a_sample_here() -> None:
    assert tuple(KINDS) == CONSTRAINT_KINDS
    assert set(SAMPLES) == set(KINDS)
    assert all(how.kind == kind for kind, how in KINDS.items())
    # The parser knows every constraint annotation from the registry, and its own three.
    known = ("key", "unique", "index", "range", "check", "card", "search")
    assert (*known, "default", "renamed_from") == KNOWN_ANNOTATIONS
    assert tuple(SYNTAX) == known[1:]
    assert {KINDS[k].written for k in KINDS} == set(SYNTAX)


@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
def test_each_kind_parses_prints_and_parses_back(kind: ConstraintKind) -> None:
    table, c = _only(kind)
    assert c.kind == kind
    s = parse_schema(_schema(*SAMPLES[kind][:2]))
    text = schema_text(s)
    again = parse_schema(text)
    assert again.require(table) == s.require(table)
    assert schema_text(again) == text
    how = KINDS[kind]
    printed = how.text(c)
    assert printed in text
    if how.placement == "type":  # a line of its own in the body
        assert f"\n    {printed}\n" in text
    else:  # after its property's type
        assert f"{c.columns[0]}: " in text.split(printed)[0].rsplit("\n", 1)[1]


@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
def test_each_kind_diffs_through_its_description(kind: ConstraintKind) -> None:
    table, c = _only(kind)
    without, with_ = parse_schema(_schema()), parse_schema(_schema(*SAMPLES[kind][:2]))
    how = KINDS[kind]
    expected = StepConstraint(kind, c.columns, how.detail(c))
    [add] = schema_changes(without, with_)
    assert add == AddConstraint(table, constraint=expected)
    assert add.cost == Cost(how.add_cost)
    assert add.describe() == f"add {expected} on {table} ({how.add_note})"
    assert str(expected) == f"@{how.written}({how.args(c)})"
    [drop] = schema_changes(with_, without)
    assert drop == DropConstraint(table, constraint=expected)
    assert drop.cost == Cost.METADATA
    # Changing its value (or adding another member) is a drop and an add, or an add.
    _, other = _only(kind, 2)
    changed = schema_changes(with_, parse_schema(_schema(table, SAMPLES[kind][2])))
    assert (
        AddConstraint(table, constraint=StepConstraint(kind, other.columns, how.detail(other)))
        in changed
    )
    assert all(isinstance(step, AddConstraint | DropConstraint) for step in changed)


@pytest.mark.parametrize("kind", CONSTRAINT_KINDS)
def test_each_kind_merges_three_way_by_its_rule(kind: ConstraintKind) -> None:
    table, first, second = SAMPLES[kind]
    how = KINDS[kind]
    base = parse_schema(_schema())
    one = parse_schema(_schema(table, first))
    two = parse_schema(_schema(table, second))
    # Added on one side: the merge takes it, and lists it for the engine to check when
    # its description says so.
    for ours, theirs, by in ((one, base, "ours"), (base, one, "theirs")):
        m = merge_schemas(base, ours, theirs)
        assert not m.conflicts
        assert m.schema.require(table).of_kind(kind) == one.require(table).of_kind(kind)
        added = [(a.table, a.kind, a.added_by) for a in m.added_constraints]
        assert added == ([(table, kind, by)] if how.records_added else [])
    # Dropped on one side, kept on the other: the drop wins.
    m = merge_schemas(one, one, base)
    assert not m.conflicts and m.schema.require(table).of_kind(kind) == ()
    # Both sides change it differently.
    m = merge_schemas(base, one, two)
    if how.merge == "set":  # both members survive
        assert not m.conflicts
        merged = {c.columns for c in m.schema.require(table).of_kind(kind)}
        assert merged == {c.columns for s in (one, two) for c in s.require(table).of_kind(kind)}
    else:  # one value per property (or table): a schema conflict, settled by a strategy
        [c] = m.conflicts
        assert c.kind == "schema_conflict" and c.table == table
        assert how.kind in c.message
        for strategy, side in (("ours", one), ("theirs", two)):
            settled = merge_schemas(base, one, two, strategy=strategy)
            assert not settled.conflicts and len(settled.resolved) == 1
            assert settled.schema.require(table).of_kind(kind) == side.require(table).of_kind(kind)


def test_a_tables_list_is_in_canonical_order_whatever_the_order_written() -> None:
    written = """
    node Doc {
        slug: String @key
        @search(b)
        b: String? @check("x+")
        a: F64? @range(0.0..1.0)
        @index(b)
        @range(c, 1..)
        c: I32?
        @unique(b)
        @check(a2, "y")
        a2: String?
    }
    """
    t = parse_schema(written).require("Doc")
    assert [c.kind for c in t.constraints] == [
        "unique",
        "index",
        "range",
        "range",
        "check",
        "check",
        "search",
    ]
    # Keyed kinds (one per property) in property order; the views follow the list.
    assert list(t.ranges) == ["a", "c"] and list(t.checks) == ["b", "a2"]
    assert parse_schema(schema_text(parse_schema(written))).require("Doc") == t


# What the printer before the registry stored for a schema with every kind (written by
# graphlake at c9bf555^): stored schemas are this text, read back with `stored=True`.
OLD_STORED = """\
node Doc {
    slug: String @key
    title: String
    lang: String @check("[a-z]{2}")
    score: F64? @range(0.0..1.0) @default(0.5)
    born: Date? @range("2000-01-01"..)
    body: String?
    embedding: Vector(4)?
    rank: I32 @range(-5..) @renamed_from(position)
    @unique(title)
    @unique(lang, rank)
    @index(lang)
    @index(embedding, metric="l2")
    @search(title, body)
}

node Tag {
    name: String @key
}

edge Tagged: Doc -> Tag {
    weight: F32? @range(..10.0)
    @card(0..3)
}
"""
OLD_DOC = (
    Constraint("unique", ("title",)),
    Constraint("unique", ("lang", "rank")),
    Constraint("index", ("lang",)),
    Constraint("range", ("score",), Range(0.0, 1.0)),
    Constraint("range", ("born",), Range(date(2000, 1, 1), None)),
    Constraint("range", ("rank",), Range(-5, None)),
    Constraint("check", ("lang",), "[a-z]{2}"),
    Constraint("vector_index", ("embedding",), "l2"),
    Constraint("search", ("title",)),
    Constraint("search", ("body",)),
)
OLD_TAGGED = (
    Constraint("range", ("weight",), Range(None, 10.0)),
    Constraint("card", (), Cardinality(0, 3)),
)


def test_a_schema_the_old_printer_stored_loads_and_prints_back_the_same() -> None:
    s = parse_schema(OLD_STORED, stored=True)
    assert s.require("Doc").constraints == OLD_DOC
    assert s.require("Tagged").constraints == OLD_TAGGED
    assert s.require("Doc").uniques == (("title",), ("lang", "rank"))
    assert s.require_edge("Tagged").card == Cardinality(0, 3)
    assert schema_text(s) == OLD_STORED


def test_a_graph_with_an_old_stored_schema_opens_and_keeps_its_text(tmp_path) -> None:
    gl.Graph.init(tmp_path / "g", OLD_STORED)
    g = gl.Graph.open(tmp_path / "g")
    commit = g.resolve("main")
    assert g.repo.schemas.text(commit.schema_id) == OLD_STORED
    assert g.schema.require("Doc").constraints == OLD_DOC
    assert g.schema.require("Tagged").constraints == OLD_TAGGED
