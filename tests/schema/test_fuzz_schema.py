"""Fuzz over the schema grammar: generated `.pg` texts, and mutations of them, either parse
or raise `SchemaError` (issue 22, item 6), and what parses has an Arrow schema.

Texts come from `hypothesis.extra.lark.from_lark` over `schema/grammar.lark`, with the
terminals drawn from small hand-picked sets (the language's type and annotation names;
numbers at every limit, 5,000 digits included; regexes RE2 refuses or that would
backtrack), and from declarations shaped to pass the grammar and the key rule (so their
types and annotations reach the semantic checks), then from mutations of both. Bounded
for CI: fixed example counts, derandomized, no example database.
"""

from __future__ import annotations

import contextlib
from importlib import resources

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from graphlake.errors import SchemaError
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.parser import parse_schema

EXAMPLES = 200
MUTATIONS = 200

NAMES = [
    "Person",
    "Company",
    "name",
    "age",
    "String",
    "I32",
    "I64",
    "U64",
    "F32",
    "F64",
    "Bool",
    "Date",
    "DateTime",
    "Vector",
    "Blob",
    "enum",
    "key",
    "unique",
    "index",
    "range",
    "check",
    "card",
    "search",
    "default",
    "renamed_from",
    "metric",
    "true",
    "a",
    "b",
    "_x",
    "id",
]
NUMBERS = [
    "0",
    "1",
    "2",
    "-1",
    "0.5",
    "1e999",
    "65536",
    "65537",
    "2147483648",
    "18446744073709551616",
    "9223372036854775808",
    "9" * 5000,
    "-" + "9" * 5000,
]
STRINGS = [
    '"a"',
    '"(a+)+"',
    '"(a)\\1"',
    '"a{4294967296}"',
    '"' + "(" * 2000 + '"',
    '"' + "(" * 60 + "a" + ")" * 60 + '"',
    '"2020-01-01"',
    '"cosine"',
    '""',
]
_TERMINALS = {
    "NAME": st.sampled_from(NAMES),
    "NUMBER": st.sampled_from(NUMBERS),
    "STRING": st.sampled_from(STRINGS),
    "NODE": st.just("node "),
    "EDGE": st.just("edge "),
    "WS": st.just(" "),
    "LINE_COMMENT": st.just("//\n"),
    "BLOCK_COMMENT": st.just("/**/"),
}
_LARK = Lark(
    resources.files("graphlake.schema").joinpath("grammar.lark").read_text("utf-8"),
    parser="lalr",
    lexer="contextual",
)
# Every terminal padded with a space: hypothesis does not put ignored tokens between
# terminals, and `node` followed by a name must not lex as one name.
TEXTS = from_lark(
    _LARK,
    explicit={name: strategy.map(lambda t: f" {t} ") for name, strategy in _TERMINALS.items()},
)
# Declarations that pass the grammar and the key rule, so their types and annotations reach
# the semantic checks: `from_lark` alone rarely writes a node type with one `@key`.
_number = st.sampled_from(NUMBERS)
_type = st.one_of(
    st.sampled_from(["String", "I32", "I64", "U64", "F32", "F64", "Bool", "Date", "Blob"]),
    st.builds(lambda n: f"Vector({n})", _number),
    st.builds(lambda n: "[" * n + "String" + "]" * n, st.sampled_from([1, 2, 500])),
    st.just("enum(a, b)"),
)
_annotation = st.one_of(
    st.builds(lambda a, b: f"@range({a}..{b})", _number, _number),
    st.builds(lambda a: f"@range({a}..)", _number),
    st.builds(lambda a: f"@default({a})", st.one_of(_number, st.sampled_from(STRINGS))),
    st.builds(lambda r: f"@check({r})", st.sampled_from(STRINGS)),
    st.sampled_from(["@unique", "@index", "@search", '@index(metric="cosine")', ""]),
)
SHAPED = st.builds(
    lambda t, a, c: (
        f"node Person {{ name: String @key\n v: {t}? {a} }}\nedge E: Person -> Person @card({c})"
    ),
    _type,
    _annotation,
    st.builds(lambda a, b: f"{a}..{b}", _number, st.one_of(st.just(""), _number)),
)
TOKENS = [
    *NAMES,
    *NUMBERS,
    *STRINGS,
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    "->",
    "..",
    "@",
    "=",
    ",",
    ";",
    "?",
    "node",
    "edge",
    '"',
    "/*",
    "\x00",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.one_of(TEXTS, SHAPED))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "repeat"]))
        if kind == "insert":
            text = f"{text[:at]} {draw(st.sampled_from(TOKENS))} {text[at:]}"
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]
        else:  # nesting and long lists: a slice repeated many times
            end = min(len(text), at + draw(st.integers(1, 6)))
            text = text[:at] + text[at:end] * draw(st.sampled_from([2, 50, 600])) + text[end:]
    return text


def _parse(text: str) -> None:
    with contextlib.suppress(SchemaError):
        schema = parse_schema(text)
        for t in (*schema.nodes.values(), *schema.edges.values()):
            arrow_schema(t)


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


@_settings(EXAMPLES)
@given(TEXTS)
def test_generated_schemas_parse_or_raise_schema_errors(text: str) -> None:
    _parse(text)


@_settings(EXAMPLES)
@given(SHAPED)
def test_shaped_schemas_parse_or_raise_schema_errors(text: str) -> None:
    _parse(text)


@_settings(MUTATIONS)
@given(mutated())
def test_mutated_schemas_parse_or_raise_schema_errors(text: str) -> None:
    _parse(text)
