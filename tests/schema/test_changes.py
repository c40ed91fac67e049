"""`schema_changes`: the typed steps between two schemas, their costs and refusals."""

from __future__ import annotations

import pytest

from graphlake.errors import SchemaChangeRefusedError, SchemaError
from graphlake.schema.changes import (
    AddConstraint,
    AddProperty,
    AddType,
    ChangeDefault,
    Cost,
    DropConstraint,
    DropProperty,
    DropType,
    NarrowProperty,
    RenameProperty,
    RenameType,
    WidenProperty,
    schema_changes,
)
from graphlake.schema.parser import parse_schema

BASE = """
node Person { name: String @key, age: I32?, score: F32, kind: enum(a, b), nick: String?,
              emb: Vector(4)?, code: String }
node Company { cname: String @key }
edge WorksAt: Person -> Company { since: I64? }
"""


def steps(new: str, old: str = BASE) -> list:
    return schema_changes(parse_schema(old), parse_schema(new))


def edit(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new)


def test_equal_schemas_have_no_steps() -> None:
    assert steps(BASE) == []
    # Layout and comments do not matter, only the model.
    assert steps("// same\n" + BASE.replace(", ", ",\n  ")) == []


@pytest.mark.parametrize(
    ("change", "kind", "cost"),
    [
        (("nick: String?", "nick: String?, email: String?"), AddProperty, Cost.METADATA),
        (("nick: String?", 'nick: String?, lang: String @default("en")'), AddProperty, Cost.COLUMN),
        ((", nick: String?", ""), DropProperty, Cost.METADATA),
        (("nick: String?", "handle: String? @renamed_from(nick)"), RenameProperty, Cost.METADATA),
        (("age: I32?", "age: I64?"), WidenProperty, Cost.COLUMN),
        (("score: F32", "score: F64"), WidenProperty, Cost.COLUMN),
        (("score: F32", "score: F32?"), WidenProperty, Cost.METADATA),
        (("kind: enum(a, b)", "kind: enum(a, b, c)"), WidenProperty, Cost.METADATA),
        (("kind: enum(a, b)", "kind: String"), WidenProperty, Cost.METADATA),
        (("nick: String?", "nick: String"), NarrowProperty, Cost.CHECK),
        (("kind: enum(a, b)", "kind: enum(a)"), NarrowProperty, Cost.CHECK),
        (("code: String", "code: enum(x, y)"), NarrowProperty, Cost.CHECK),
        (("score: F32", "score: F32 @default(1.5)"), ChangeDefault, Cost.METADATA),
        (("code: String", "code: String @unique"), AddConstraint, Cost.CHECK),
        (("code: String", "code: String @index"), AddConstraint, Cost.COLUMN),
        (("code: String", 'code: String @check("[a-z]+")'), AddConstraint, Cost.CHECK),
        (("age: I32?", "age: I32? @range(0..150)"), AddConstraint, Cost.CHECK),
        (("{ since: I64? }", "@card(0..1) { since: I64? }"), AddConstraint, Cost.CHECK),
        (("node Company", "node Place { p: String @key }\nnode Company"), AddType, Cost.METADATA),
    ],
)
def test_each_step_kind(change: tuple[str, str], kind: type, cost: Cost) -> None:
    (step,) = steps(edit(*change))
    assert type(step) is kind
    assert step.cost == cost
    assert step.to_json()["cost"] == str(cost)
    assert step.describe()


def test_constraint_removal_is_metadata() -> None:
    with_unique = edit("code: String", "code: String @unique")
    (step,) = steps(BASE, old=with_unique)
    assert isinstance(step, DropConstraint) and step.cost == Cost.METADATA
    assert step.constraint.kind == "unique" and step.constraint.columns == ("code",)


def test_drop_types_edge_with_its_node() -> None:
    new = (
        "node Person { name: String @key, age: I32?, score: F32, kind: enum(a, b), "
        "nick: String?, emb: Vector(4)?, code: String }"
    )
    got = steps(new)
    assert [type(s) for s in got] == [DropType, DropType]
    assert {s.table for s in got} == {"Company", "WorksAt"}


def test_dropping_a_node_type_edges_still_use_is_refused_by_the_parser() -> None:
    with pytest.raises(SchemaError, match="unknown node type 'Company'"):
        steps(BASE.replace("node Company { cname: String @key }", ""))


def test_rename_type_keeps_edges_and_constraints() -> None:
    new = BASE.replace("node Company {", "node Firm @renamed_from(Company) {").replace(
        "-> Company", "-> Firm"
    )
    (step,) = steps(new)
    assert step == RenameType("Firm", old="Company")


def test_rename_without_annotation_is_drop_plus_add() -> None:
    got = steps(edit("nick: String?", "handle: String?"))
    assert [type(s) for s in got] == [DropProperty, AddProperty]


def test_renamed_property_keeps_its_constraints() -> None:
    old = edit("code: String", 'code: String @unique @check("[a-z]+")')
    new = edit("code: String", 'ref: String @unique @check("[a-z]+") @renamed_from(code)')
    (step,) = steps(new, old=old)
    assert isinstance(step, RenameProperty) and step.old.name == "code"


def test_an_applied_rename_annotation_is_inert() -> None:
    renamed = edit("nick: String?", "handle: String? @renamed_from(nick)")
    assert steps(renamed, old=renamed) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("name: String @key", "name: String @key, k2: String?"), None),
        (
            ("node Person { name: String @key", "node Person { name: String, nm: String? @key"),
            "key",
        ),
        (("emb: Vector(4)?", "emb: Vector(8)?"), "dimension"),
        (("age: I32?", "age: F64?"), "can change or lose values"),
        (("since: I64?", "since: F64?"), "can change or lose values"),
        (("age: I32?", "age: I16?"), None),
        (("nick: String?", "nick: String?, req: String"), "nullable"),
        (("WorksAt: Person -> Company", "WorksAt: Person -> Person"), "destination"),
        (("nick: String?", "h: String? @renamed_from(nope)"), "no property Person.nope"),
        (("nick: String?", "nick: String?, h: String? @renamed_from(nick)"), "still declared"),
        (("node Company {", "node Firm @renamed_from(Nope) {"), None),
        (("name: String @key", "name: I64 @key"), "key property name changes type"),
    ],
)
def test_refused_changes(change: tuple[str, str], message: str | None) -> None:
    text = edit(*change)
    try:
        parse_schema(text)
    except SchemaError:
        return  # refused already by the parser (e.g. an unknown type), also fine
    if message is None:
        # Not refused: these are legal steps (a new nullable property, a type added).
        steps(text)
        return
    with pytest.raises(SchemaChangeRefusedError, match=message):
        steps(text)


def test_node_to_edge_rename_is_refused() -> None:
    new = BASE.replace(
        "edge WorksAt: Person -> Company { since: I64? }",
        "edge Employs: Person -> Company @renamed_from(Company)",
    )
    with pytest.raises((SchemaChangeRefusedError, SchemaError)):
        steps(new)


def test_steps_order_renames_first_drops_last() -> None:
    new = (
        BASE.replace("node Company {", "node Firm @renamed_from(Company) {")
        .replace("-> Company", "-> Firm")
        .replace("nick: String?", "email: String?")
        + "\nnode Place { p: String @key }"
    )
    kinds = [type(s) for s in steps(new)]
    assert kinds[0] is RenameType
    assert kinds.index(DropProperty) < kinds.index(AddType)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("node A { k: String @key @default(1) }", "is a quoted string"),
        ("node A { k: String @key, n: I32 @default(x) }", "is a number"),
        ("node A { k: String @key, n: I32 @default(1.5) }", "not a I32 value"),
        ("node A { k: String @key, n: Bool @default(yes) }", "true or false"),
        ("node A { k: String @key, n: enum(a) @default(b) }", r"not a value of enum\(a\)"),
        ("node A { k: String @key, n: Vector(2) @default(1) }", "does not apply"),
        ("node A { k: String @key, n: I32 @default(1) @default(2) }", "already has"),
        ("node A { k: String @key, n: I32 @renamed_from(n) }", "from itself"),
        ('node A { k: String @key, n: I32 @renamed_from("m") }', "malformed"),
        ("node A @renamed_from(A) { k: String @key }", "from itself"),
        ("node A @key { k: String @key }", "must directly follow"),
        ("node A { k: String @range(1) }", "malformed @range"),
    ],
)
def test_annotation_errors(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message) as info:
        parse_schema(text)
    assert info.value.line == 1 and info.value.column
