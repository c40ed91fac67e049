"""The schema language: what `.pg` text parses to, every error it reports, the Arrow layout."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlake.errors import SchemaError, UnknownTableError
from graphlake.schema import (
    KEY_KINDS,
    SCALARS,
    Cardinality,
    Constraint,
    EdgeType,
    NodeType,
    Property,
    Range,
    Schema,
    TypeRef,
    arrow_field,
    arrow_schema,
    arrow_type,
    load_schema,
    parse_schema,
)

EXAMPLE = """\
// line comment
/* block
   comment */
node Person { name: String @key  age: I32?  embedding: Vector(32)? }
node Company {
  name: String @key
  founded: Date?
  tags: [String]?
  kind: enum(startup, corp)
}
edge Knows: Person -> Person { since: Date? }
edge WorksAt: Person -> Company @card(0..1)
node Doc @unique(title) @index(lang) @range(score, 0..1) @check(lang, "[a-z]{2}") {
  slug: String @key
  title: String
  lang: String
  score: F64?
  body: Blob?
}
"""

S = TypeRef("String")


def node(body: str, name: str = "T") -> NodeType:
    """Parse one node type whose body is `body` (which must declare its own key)."""
    return parse_schema(f"node {name} {{ {body} }}").nodes[name]


def keyed(body: str) -> NodeType:
    """A node type with key `k: String @key` followed by `body`."""
    return node(f"k: String @key\n{body}")


def pos(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based (line, column) of the `occurrence`-th `needle` in `text`."""
    at = -1
    for _ in range(occurrence):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def error(text: str) -> SchemaError:
    with pytest.raises(SchemaError) as info:
        parse_schema(text)
    return info.value


def assert_error(text: str, needle: str | tuple[str, int], message: str) -> SchemaError:
    """`text` fails at `needle` with a message containing `message`.

    `needle` is the text the error must point at; `(text, n)` means its n-th occurrence.
    """
    e = error(text)
    where = pos(text, needle) if isinstance(needle, str) else pos(text, *needle)
    assert (e.line, e.column) == where, str(e)
    assert message in str(e)
    assert f"line {where[0]}, column {where[1]}: " in str(e)
    return e


# --- the model built -------------------------------------------------------------------


def test_example_builds_the_exact_model() -> None:
    s = parse_schema(EXAMPLE)
    assert list(s.nodes) == ["Person", "Company", "Doc"]
    assert list(s.edges) == ["Knows", "WorksAt"]
    assert s.text == EXAMPLE
    assert s.nodes["Person"] == NodeType(
        name="Person",
        properties=(
            Property("name", S),
            Property("age", TypeRef("I32"), nullable=True),
            Property("embedding", TypeRef("Vector", dim=32), nullable=True),
        ),
        key="name",
    )
    assert s.nodes["Company"] == NodeType(
        name="Company",
        properties=(
            Property("name", S),
            Property("founded", TypeRef("Date"), nullable=True),
            Property("tags", TypeRef("List", item=S), nullable=True),
            Property("kind", TypeRef("Enum", values=("startup", "corp"))),
        ),
        key="name",
    )
    assert s.nodes["Doc"] == NodeType(
        name="Doc",
        properties=(
            Property("slug", S),
            Property("title", S),
            Property("lang", S),
            Property("score", TypeRef("F64"), nullable=True),
            Property("body", TypeRef("Blob"), nullable=True),
        ),
        constraints=(
            Constraint("unique", ("title",)),
            Constraint("index", ("lang",)),
            Constraint("range", ("score",), Range(0.0, 1.0)),
            Constraint("check", ("lang",), "[a-z]{2}"),
        ),
        key="slug",
    )
    assert s.edges["Knows"] == EdgeType(
        name="Knows",
        properties=(Property("since", TypeRef("Date"), nullable=True),),
        src="Person",
        dst="Person",
    )
    assert s.edges["WorksAt"] == EdgeType(
        name="WorksAt",
        properties=(),
        constraints=(Constraint("card", (), Cardinality(0, 1)),),
        src="Person",
        dst="Company",
    )


def test_schema_helpers_on_the_parsed_example() -> None:
    s = parse_schema(EXAMPLE)
    assert s.table_names == ("Person", "Company", "Doc", "Knows", "WorksAt")
    assert s.table("Knows") is s.edges["Knows"]
    assert s.table("Nope") is None
    assert s.require("Knows") is s.edges["Knows"]
    assert s.require("Doc") is s.nodes["Doc"]
    with pytest.raises(
        UnknownTableError, match=r"unknown node or edge type 'Nope' \(known: Person,"
    ):
        s.require("Nope")
    assert s.require_edge("WorksAt") is s.edges["WorksAt"]
    with pytest.raises(UnknownTableError, match="unknown edge type 'Doc'"):
        s.require_edge("Doc")  # a node type is no edge type
    assert [e.name for e in s.edges_touching("Company")] == ["WorksAt"]
    assert s.nodes["Doc"].property("score") == Property("score", TypeRef("F64"), nullable=True)
    assert s.nodes["Doc"].property_names == ("slug", "title", "lang", "score", "body")
    assert s.edges["Knows"].is_edge and not s.nodes["Doc"].is_edge


@pytest.mark.parametrize("kind", SCALARS)
def test_every_scalar_type(kind: str) -> None:
    t = keyed(f"a: {kind}  b: {kind}?")
    assert t.properties[1:] == (Property("a", TypeRef(kind)), Property("b", TypeRef(kind), True))


def test_composite_types() -> None:
    t = keyed("v: Vector(3) b: Blob l: [I64] e: enum(x) le: [enum(a, b)]? n: enum(p, q)?")
    assert t.properties[1:] == (
        Property("v", TypeRef("Vector", dim=3)),
        Property("b", TypeRef("Blob")),
        Property("l", TypeRef("List", item=TypeRef("I64"))),
        Property("e", TypeRef("Enum", values=("x",))),
        Property("le", TypeRef("List", item=TypeRef("Enum", values=("a", "b"))), True),
        Property("n", TypeRef("Enum", values=("p", "q")), True),
    )


@pytest.mark.parametrize(
    "body",
    [
        "k: String @key a: I32 b: Bool",
        "k: String @key, a: I32, b: Bool",
        "k: String @key; a: I32; b: Bool;",
        "k: String @key\n a: I32\n\n b: Bool\n",
        ";, k: String @key ,; a: I32 b: Bool ,",
        "k: String @key // trailing comment\n a /* inline */ : I32 b:Bool",
    ],
)
def test_property_separators_are_optional(body: str) -> None:
    assert node(body).property_names == ("k", "a", "b")


def test_keywords_work_as_property_names() -> None:
    t = node(
        "node: String @key edge: I32 @index String: Bool enum: enum(a) type: String "
        "kind: Vector(2) key: I64 card: U32 @unique Vector: [String] range: F32"
    )
    assert t.key == "node"
    assert t.property_names == (
        "node",
        "edge",
        "String",
        "enum",
        "type",
        "kind",
        "key",
        "card",
        "Vector",
        "range",
    )
    assert t.indexes == (("edge",),)
    assert t.uniques == (("card",),)


def test_type_names_may_look_like_keywords() -> None:
    s = parse_schema("node node { k: String @key }\nedge edge: node -> node")
    assert list(s.nodes) == ["node"] and list(s.edges) == ["edge"]


def test_edge_bodies_may_be_omitted_or_empty() -> None:
    s = parse_schema(
        "edge A: N -> N\nedge B: N -> N {}\nedge C: N -> N @card(1..) {}\nnode N { k: String @key }"
    )
    assert [(e.name, e.properties, e.card) for e in s.edges.values()] == [
        ("A", (), None),
        ("B", (), None),
        ("C", (), Cardinality(1, None)),
    ]


def test_edges_may_name_node_types_declared_later() -> None:
    s = parse_schema("edge E: A -> B { w: F32 }\nnode A { k: I64 @key }\nnode B { k: Date @key }")
    assert (s.edges["E"].src, s.edges["E"].dst) == ("A", "B")
    assert list(s.nodes) == ["A", "B"]


def test_inline_annotations() -> None:
    t = node(
        'k: I64 @key  a: String @unique @index @check("^x")  n: I32? @range(-5..10)  '
        "f: F32 @range(..2.5)  g: F64 @range(1e2..)"
    )
    assert t.key == "k"
    assert t.uniques == (("a",),)
    assert t.indexes == (("a",),)
    assert t.checks == {"a": "^x"}
    assert t.ranges == {"n": Range(-5, 10), "f": Range(None, 2.5), "g": Range(100.0, None)}
    # Bounds take the column's type: ints stay int, float kinds get floats.
    assert type(t.ranges["n"].min) is int and type(t.ranges["g"].min) is float


def test_type_level_annotations_in_the_body_and_header() -> None:
    t = parse_schema(
        "node T @index(a, b) {\n"
        "  k: String @key\n"
        "  @unique(a, b)\n"
        '  a: String, @range(n, 0..9) @check(a, "a+")\n'
        "  n: U32\n"
        "  b: I64 @unique(n) @index\n"
        "}"
    ).nodes["T"]
    assert t.uniques == (("a", "b"), ("n",))
    # `@index` after `@unique(n)` still belongs to `b`: type-level annotations do not end a
    # property, only a separator does.
    assert t.indexes == (("a", "b"), ("b",))
    assert t.ranges == {"n": Range(0, 9)}
    assert t.checks == {"a": "a+"}


def test_constraints_keep_source_order_across_forms() -> None:
    t = node("@unique(b) k: String @key a: I32 @unique b: I32 @unique(a, b)")
    assert t.uniques == (("b",), ("a",), ("a", "b"))


def test_check_strings_are_raw() -> None:
    t = keyed(r'a: String @check("\d+\"x\\")')
    assert t.checks == {"a": r"\d+\"x\\"}


def test_date_and_datetime_ranges() -> None:
    t = keyed(
        'd: Date @range("2020-01-01".."2020-12-31")  '
        't: DateTime? @range("2020-01-01T10:00:00+02:00"..)  '
        'u: DateTime @range(.."2021-06-01 12:00")'
    )
    utc = dt.UTC
    assert t.ranges == {
        "d": Range(dt.date(2020, 1, 1), dt.date(2020, 12, 31)),
        "t": Range(dt.datetime(2020, 1, 1, 8, tzinfo=utc), None),
        "u": Range(None, dt.datetime(2021, 6, 1, 12, tzinfo=utc)),
    }
    assert t.ranges["t"].min.tzinfo == utc  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("card", "expected"),
    [("0..1", Cardinality(0, 1)), ("1..", Cardinality(1, None)), ("2..2", Cardinality(2, 2))],
)
def test_cardinality(card: str, expected: Cardinality) -> None:
    s = parse_schema(f"node N {{ k: String @key }} edge E: N -> N @card({card})")
    assert s.edges["E"].card == expected


def test_card_inside_an_edge_body() -> None:
    s = parse_schema("node N { k: String @key } edge E: N -> N { w: I32 @card(0..3) }")
    assert s.edges["E"].card == Cardinality(0, 3)
    assert s.edges["E"].properties == (Property("w", TypeRef("I32")),)


def test_edge_constraints() -> None:
    s = parse_schema(
        "node N { k: String @key }\n"
        'edge E: N -> N @unique(w) { w: I32 @range(0..) c: String @check("x") }'
    )
    e = s.edges["E"]
    assert (e.uniques, e.ranges, e.checks) == ((("w",),), {"w": Range(0, None)}, {"c": "x"})


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_every_key_kind(kind: str) -> None:
    assert node(f"k: {kind} @key").key == "k"


# --- syntax errors ---------------------------------------------------------------------


def test_syntax_error_names_what_was_expected() -> None:
    e = assert_error(
        "node Doc Person { k: String @key }",
        "Person",
        "expected '{' or an annotation, found 'Person'",
    )
    assert e.args[0] == (
        "schema error: line 1, column 10: expected '{' or an annotation, found 'Person'"
    )


@pytest.mark.parametrize(
    ("text", "needle", "message"),
    [
        ("nodes X {}", "nodes", "expected 'node', 'edge' or end of input, found 'nodes'"),
        ("node A { k: String @key }\nNode B {}", "Node", "expected 'node', 'edge'"),
        ("node A {\n  k String @key\n}", "String", "expected ':', found 'String'"),
        ("node A { k: String @key 9a: I32 }", "9", "expected a name, '(', '}' or an annotation"),
        ("node A { k: I32, 9a: I32 }", "9", "expected a name, '}' or an annotation, found '9'"),
        ("node A { k: [String?] }", "?", "expected ']', found '?'"),
        ("node A { k: String @key }\nedge E: A => A", "=", "expected '->', found '='"),
        ("node A { k: String # }", "#", "found '#'"),
        ("node A { k: enum(a b) }", "b)", "expected ',' or ')', found 'b'"),
        ("node A { k: String @key }}", ("}", 2), "found '}'"),
        ('node A { k: String @check("abc) }', '"', "unterminated string"),
        ("node A { k: String @key }\n/* never closed", "/*", "unterminated block comment"),
    ],
)
def test_syntax_errors(text: str, needle: str | tuple[str, int], message: str) -> None:
    assert_error(text, needle, message)


def test_unexpected_end_points_just_past_the_last_token() -> None:
    text = "node A {\n  k: String @key\n  a: I32   \n\n"
    e = error(text)
    assert (e.line, e.column) == (3, 9)  # right after `I32`
    assert "found end of input" in str(e)
    assert "'}'" in str(e)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_no_lark_exception_escapes(data: st.DataObject) -> None:
    """Any mangling of a valid schema parses or fails with a located SchemaError."""
    cut = data.draw(st.integers(0, len(EXAMPLE)))
    drop = data.draw(st.integers(0, 5))
    insert = data.draw(st.text(alphabet='{}()[]@:;,.?->"/*\n azAZ09_', max_size=4))
    text = EXAMPLE[:cut] + insert + EXAMPLE[cut + drop :]
    try:
        parse_schema(text)
    except SchemaError as e:
        assert e.line is not None and e.line >= 1
        assert e.column is not None and e.column >= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_never_escapes_as_a_lark_error(text: str) -> None:
    try:
        parse_schema(text)
    except SchemaError as e:
        assert e.line is not None and e.column is not None


# --- semantic errors -------------------------------------------------------------------

K = "k: String @key"


@pytest.mark.parametrize(
    ("text", "needle", "message"),
    [
        # Names
        (f"node A {{ {K} }}\nedge A: A -> A", "A:", "duplicate type name 'A'"),
        (f"node A {{ {K} }}\nnode a {{ {K} }}", "a {", "duplicate type name 'a'"),
        (f"node _A {{ {K} }}", "_A", "may not start with '_'"),
        (f"node A {{ {K} a: I32 a: I64 }}", "a: I64", "duplicate property 'a'"),
        (f"node A {{ {K} Ab: I32 aB: I64 }}", "aB", "same as 'Ab' apart from case"),
        (f"node A {{ {K} id: I32 }}", "id", "property name 'id' is reserved"),
        (f"node A {{ {K} ID: I32 }}", "ID", "property name 'ID' is reserved"),
        (f"node A {{ {K} src: I32 }}", "src", "is reserved"),
        (f"node A {{ {K} dst: I32 }}", "dst", "is reserved"),
        (f"node A {{ {K} _rowid: I32 }}", "_rowid", "starting with '_row'"),
        (f"node A {{ {K} }} edge E: A -> A {{ id: I32 }}", "id", "is reserved"),
        # Endpoints
        (f"node A {{ {K} }}\nedge E: A -> Bx", "Bx", "unknown node type 'Bx'"),
        (f"node Person {{ {K} }}\nedge E: Persn -> Person", "Persn", "did you mean 'Person'"),
        (f"node A {{ {K} }}\nedge E: A -> A\nedge F: E -> A", "E ->", "'E' is an edge type"),
        # Types
        (f"node A {{ {K} a: Strng }}", "Strng", "unknown type 'Strng' (did you mean 'String'?)"),
        (f"node A {{ {K} a: string }}", "string", "did you mean 'String'"),
        (f"node A {{ {K} a: Enum(x) }}", "Enum", "did you mean 'enum'"),
        (f"node A {{ {K} a: String(3) }}", "(3", "type String takes no arguments"),
        (
            f"node A {{ {K} a: Blob() }}",
            "(",
            "type Blob takes no arguments",
        ),
        (f"node A {{ {K} a: Vector }}", "Vector", "Vector needs one dimension"),
        (f"node A {{ {K} a: Vector(2, 3) }}", "(2", "Vector needs one dimension"),
        (f"node A {{ {K} a: Vector(0) }}", "0", "positive integer, found '0'"),
        (f"node A {{ {K} a: Vector(-3) }}", "-3", "positive integer"),
        (f"node A {{ {K} a: Vector(1.5) }}", "1.5", "positive integer"),
        (f"node A {{ {K} a: Vector(x) }}", "x)", "positive integer"),
        (f"node A {{ {K} a: enum() }}", "(", "enum needs at least one value"),
        (f"node A {{ {K} a: enum }}", "enum", "enum needs at least one value"),
        (f"node A {{ {K} a: enum(x, y, x) }}", "x)", "duplicate enum value 'x'"),
        (f"node A {{ {K} a: enum(x, 1) }}", "1)", "enum values must be names"),
        (f"node A {{ {K} a: [[String]] }}", "[String", "lists cannot be nested"),
        (f"node A {{ {K} a: [Vector(2)] }}", "Vector", "a list cannot hold Vector"),
        (f"node A {{ {K} a: [Blob] }}", "Blob", "a list cannot hold Blob"),
        # Keys
        ("node A { a: String }", "A", "node type A needs exactly one @key property"),
        ("node A { a: String @key b: I64 @key }", "@key }", "already has @key property 'a'"),
        ("node A { a: String? @key }", "@key", "key property 'a' must not be nullable"),
        ("node A { a: F64 @key }", "@key", "key property 'a' is F64; a key must be one of"),
        ("node A { a: Bool @key }", "@key", "a key must be one of String, I32"),
        ("node A { a: [String] @key }", "@key", "key property 'a' is [String]"),
        ("node A { a: String @key(a) }", "@key", "@key takes no arguments"),
        ("node A @key { a: String }", "@key", "@key in a type header must directly follow"),
        (
            f"node A {{ {K} }} edge E: A -> A {{ w: String @key }}",
            ("@key", 2),
            "edge types have no key",
        ),
        # Annotations
        (
            f"node A {{ {K} @foo }}",
            "@foo",
            "unknown annotation '@foo'; known annotations are "
            "@key, @unique, @index, @range, @check, @card",
        ),
        (f"node A {{ {K} a: I32 @rnage(0..1) }}", "@rnage", "did you mean 'range'"),
        (f"node A @unique(nope) {{ {K} }}", "nope", "'nope' is not a property of node type A"),
        (f"node A {{ {K} title: String @index(titel) }}", "titel", "did you mean 'title'"),
        (f"node A {{ {K} a: I32 @unique() }}", "@unique", "needs at least one property name"),
        (f"node A {{ {K} a: I32 @unique(a, a) }}", "a)", "'a' appears twice in @unique"),
        (f"node A {{ {K} a: I32 @unique(a, 0..1) }}", "..", "expected a property name"),
        (f"node A {{ {K} a: I32 @unique @unique(a) }}", "@unique(", "duplicate @unique(a)"),
        (
            f"node A {{ {K} a: I32 b: I32 @index(a, b) @index(b, a) }}",
            "@index(b",
            "duplicate @index(b, a)",
        ),
        (f"node A {{ {K} a: Blob @unique }}", "@unique", "does not apply to Blob property"),
        (f"node A {{ {K} a: Vector(2) @unique }}", "@unique", "does not apply to Vector(2)"),
        (f"node A {{ {K} a: Blob @index }}", "@index", "@index does not apply to Blob"),
        (
            f"node A {{ {K}, @unique }}",
            "@unique",
            "@unique without a property name must directly follow a property's type",
        ),
        (f"node A {{ @range(0..1) {K} }}", "@range", "write @range(min..max) after a property"),
        (f'node A {{ {K} a: I32; @check("x") }}', "@check", "without a property name"),
        # @range
        (
            f"node A {{ {K} a: String @range(0..1) }}",
            "@range",
            "@range applies to numeric, Date and DateTime properties; 'a' is String",
        ),
        (f"node A @range(b, 0..1) {{ {K} b: Bool }}", "@range", "'b' is Bool"),
        (f"node A {{ {K} a: I32 @range(..) }}", "..", "a range needs a minimum, a maximum"),
        (f"node A {{ {K} a: I32 @range(5..1) }}", "..", "minimum 5 is greater than its max"),
        (f"node A {{ {K} a: I32 @range(0..1.5) }}", "1.5", "bound '1.5' is not a I32 value"),
        (f"node A {{ {K} a: I32 @range(0..3000000000) }}", "3000000000", "not a I32 value"),
        (f"node A {{ {K} a: U32 @range(-1..) }}", "-1", "bound '-1' is not a U32 value"),
        (f'node A {{ {K} a: I32 @range("1"..) }}', '"1"', "takes number bounds"),
        (f"node A {{ {K} a: Date @range(0..) }}", "0..", "takes quoted bounds"),
        (f'node A {{ {K} a: Date @range("2020-13-01"..) }}', '"2020', "not a valid Date"),
        (f'node A {{ {K} a: DateTime @range(.."soon") }}', '"soon', "not a valid DateTime"),
        (
            f'node A {{ {K} a: Date @range("2021-01-01".."2020-01-01") }}',
            '.."2020',
            "greater than its maximum",
        ),
        (
            f"node A {{ {K} a: I32 @range(0..1) @range(1..2) }}",
            "@range(1",
            "'a' already has a @range",
        ),
        (f"node A {{ {K} a: I32 @range(a) }}", "@range", "malformed @range"),
        (f'node A {{ {K} a: I32 @range(a, "x") }}', '"x"', "malformed @range"),
        (f"node A {{ {K} a: I32 @range(0..1, 2..3) }}", "@range", "malformed @range"),
        # @check
        (
            f'node A {{ {K} a: I32 @check("x") }}',
            "@check",
            "@check applies to String properties; 'a' is I32",
        ),
        (f'node A {{ {K} a: enum(x) @check("x") }}', "@check", "'a' is enum(x)"),
        (f'node A {{ {K} a: String @check("(") }}', '"("', "invalid regex in @check: missing"),
        (f"node A {{ {K} a: String @check(a, 0..1) }}", "..", "malformed @check"),
        (
            f'node A {{ {K} a: String @check("x") @check(a, "y") }}',
            "@check(a",
            "'a' already has a @check",
        ),
        # @card
        (f"node A @card(0..1) {{ {K} }}", "@card", "@card applies to edge types only"),
        (f"node A {{ {K} a: I32 @card(0..1) }}", "@card", "@card applies to edge types only"),
        (f"node A {{ {K} }} edge E: A -> A @card(..1)", "..", "@card needs a minimum"),
        (f"node A {{ {K} }} edge E: A -> A @card(-1..1)", "-1", "non-negative integers"),
        (f"node A {{ {K} }} edge E: A -> A @card(0..1.5)", "1.5", "non-negative integers"),
        (f"node A {{ {K} }} edge E: A -> A @card(3..2)", "..", "minimum 3 is greater"),
        (f"node A {{ {K} }} edge E: A -> A @card(e)", "@card", "malformed @card"),
        (
            f"node A {{ {K} }} edge E: A -> A @card(0..1) @card(1..)",
            "@card(1",
            "already has a @card",
        ),
    ],
)
def test_semantic_errors(text: str, needle: str | tuple[str, int], message: str) -> None:
    assert_error(text, needle, message)


@pytest.mark.parametrize("text", ["", "   \n\t", "// only a comment\n/* and another */"])
def test_empty_schema_is_refused(text: str) -> None:
    e = error(text)
    assert (e.line, e.column) == (1, 1)
    assert "empty schema" in str(e)


def test_errors_in_later_lines_carry_their_line() -> None:
    text = "node A { name: String @key }\nnode B { x: Strin @key }"
    assert_error(text, "Strin @", "unknown type 'Strin'")


# --- load_schema -----------------------------------------------------------------------


def test_load_schema_from_text() -> None:
    assert load_schema(EXAMPLE) == parse_schema(EXAMPLE)


def test_load_schema_from_path_and_str_path(tmp_path: Path) -> None:
    f = tmp_path / "graph.pg"
    f.write_text(EXAMPLE, encoding="utf-8")
    for source in (f, str(f)):
        s = load_schema(source)
        assert s == parse_schema(EXAMPLE)
        assert s.text == EXAMPLE


def test_load_schema_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="schema file not found") as info:
        load_schema(str(tmp_path / "missing.pg"))
    assert info.value.line is None
    with pytest.raises(SchemaError, match="schema file not found"):
        load_schema(tmp_path / "other.pg")


def test_load_schema_error_mentions_the_file(tmp_path: Path) -> None:
    f = tmp_path / "bad.pg"
    f.write_text("node A {\n  a: Strng @key\n}\n", encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        load_schema(f)
    assert (info.value.line, info.value.column) == (2, 6)
    assert info.value.__notes__ == [f"in schema file {f}"]


# --- Arrow -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("String", pa.string()),
        ("Bool", pa.bool_()),
        ("I32", pa.int32()),
        ("I64", pa.int64()),
        ("U32", pa.uint32()),
        ("U64", pa.uint64()),
        ("F32", pa.float32()),
        ("F64", pa.float64()),
        ("Date", pa.date32()),
        ("DateTime", pa.timestamp("us", tz="UTC")),
        ("Blob", pa.large_binary()),
    ],
)
def test_arrow_scalar_types(kind: str, expected: pa.DataType) -> None:
    assert arrow_type(TypeRef(kind)) == expected


def test_arrow_composite_types() -> None:
    assert arrow_type(TypeRef("Vector", dim=32)) == pa.list_(pa.float32(), 32)
    assert arrow_type(TypeRef("Enum", values=("a",))) == pa.string()
    assert arrow_type(TypeRef("List", item=TypeRef("I64"))) == pa.list_(pa.int64())
    enum_list = TypeRef("List", item=TypeRef("Enum", values=("a", "b")))
    assert arrow_type(enum_list) == pa.list_(pa.string())


def test_arrow_type_refuses_an_unknown_kind() -> None:
    with pytest.raises(SchemaError, match="no Arrow type"):
        arrow_type(TypeRef("Decimal"))


def test_arrow_field_nullability_and_blob_type() -> None:
    assert arrow_field(Property("a", TypeRef("I32"))) == pa.field("a", pa.int32(), False)
    blob = arrow_field(Property("b", TypeRef("Blob"), nullable=True))
    assert blob.nullable and blob.type == pa.large_binary()
    assert blob.metadata is None  # plain bytes: readable by DuckDB and row rewrites


def test_arrow_schema_of_a_node_type() -> None:
    sch = arrow_schema(parse_schema(EXAMPLE).nodes["Doc"])
    assert sch.names == ["id", "slug", "title", "lang", "score", "body"]
    assert sch.types == [
        pa.string(),
        pa.string(),
        pa.string(),
        pa.string(),
        pa.float64(),
        pa.large_binary(),
    ]
    assert [f.nullable for f in sch] == [False, False, False, False, True, True]
    assert sch.metadata == {b"graphlake:table": b"Doc", b"graphlake:kind": b"node"}
    assert sch.field("body").metadata is None
    assert sch.field("slug").metadata is None


def test_arrow_schema_of_an_edge_type() -> None:
    s = parse_schema(EXAMPLE)
    sch = arrow_schema(s.edges["Knows"])
    assert sch.names == ["id", "src", "dst", "since"]
    assert sch.types == [pa.string(), pa.string(), pa.string(), pa.date32()]
    assert [f.nullable for f in sch] == [False, False, False, True]
    assert sch.metadata == {b"graphlake:table": b"Knows", b"graphlake:kind": b"edge"}
    assert arrow_schema(s.edges["WorksAt"]).names == ["id", "src", "dst"]


def test_arrow_schema_of_every_property_kind() -> None:
    t = parse_schema(
        "node P { id_: String @key v: Vector(4)? t: [String]? e: enum(a, b) d: DateTime }"
    ).nodes["P"]
    sch = arrow_schema(t)
    assert sch.field("v").type == pa.list_(pa.float32(), 4) and sch.field("v").nullable
    assert sch.field("t").type == pa.list_(pa.string())
    assert sch.field("e").type == pa.string() and not sch.field("e").nullable
    assert sch.field("d").type == pa.timestamp("us", tz="UTC")
    # The schema builds a table: the layout is usable as-is.
    table = pa.table(
        {
            "id": ["x"],
            "id_": ["x"],
            "v": [[1.0, 2.0, 3.0, 4.0]],
            "t": [["a"]],
            "e": ["a"],
            "d": [dt.datetime(2020, 1, 1, tzinfo=dt.UTC)],
        },
        schema=sch,
    )
    assert table.schema == sch


def test_schema_module_reexports() -> None:
    import graphlake.schema as schema_pkg

    for name in (
        "parse_schema",
        "load_schema",
        "arrow_schema",
        "arrow_type",
        "Schema",
        "NodeType",
        "EdgeType",
        "TypeRef",
        "Property",
        "Range",
        "Cardinality",
    ):
        assert name in schema_pkg.__all__
        assert getattr(schema_pkg, name) is not None
    assert isinstance(parse_schema(EXAMPLE), Schema)


def test_grammar_cache_is_private_and_reused(tmp_path) -> None:
    import subprocess
    import sys

    code = (
        "from graphlake.schema.parser import parse_schema;"
        "print(sorted(parse_schema('node A { name: String @key }').nodes))"
    )
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("GRAPHLAKE_NO_GRAMMAR_CACHE", None)
    outs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        for _ in range(2)
    ]
    assert [o.stdout for o in outs] == ["['A']\n", "['A']\n"]
    assert not any(o.stderr for o in outs)  # no "failed to load" complaint
    folder = tmp_path / "graphlake"
    [cached] = folder.glob("schema-grammar-*.lark")
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert not list(folder.glob("*.tmp"))
    cached.write_bytes(b"garbage")  # a damaged cache: rebuilt, never wrong
    again = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert again.stdout == "['A']\n"
