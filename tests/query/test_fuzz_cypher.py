"""Fuzz over the Cypher grammar: generated queries, and mutations of them, never raise
anything but a typed `GraphLakeError` (issue 22, item 6).

Queries are grammar-shaped: clauses, patterns and expressions of `query/cypher.lark`
built by hypothesis strategies, with leaves drawn from small hand-picked sets (the test
graph's labels, properties and functions; integers around every limit, 5,000 digits
included; regexes RE2 refuses), so the examples reach the planner and DuckDB instead of
dying in the lexer. Mutations then insert tokens, delete slices and repeat slices up to
400 times (deep nesting, long chains). `hypothesis.extra.lark.from_lark` over the grammar
itself was measured first: ~0.1 CPU-s a draw and ~35 draws per accepted example (its
trees overrun hypothesis' buffer), over a second per example, so it is used for the
smaller schema grammar only. No generated name is `range` or another generator, and
integers are tiny or huge, never in between: a generated query stays cheap to run (the
query limits are not this test's subject). Bounded for CI: fixed example counts,
derandomized, no example database.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphlake as gl
from graphlake.errors import GraphLakeError

EXAMPLES = 200
MUTATIONS = 200

NAMES = [
    "p",
    "q",
    "r",
    "x",
    "n",
    "P",
    "K",
    "name",
    "age",
    "tags",
    "w",
    "count",
    "size",
    "toUpper",
    "collect",
    "keys",
    "labels",
    "type",
    "length",
    "coalesce",
    "abs",
    "sum",
    "id",
    "nodes",
]
INTS = ["0", "1", "2", "9223372036854775807", "9223372036854775808", "9" * 5000]
FLOATS = ["0.5", "1e3", "1e999", "9" * 400 + ".0"]
STRINGS = [
    "'a'",
    "''",
    "'(a+)+'",
    "'(a)\\\\1'",
    "'a{4294967296}'",
    "'" + "(" * 60 + "'",
    "'x'",
    '"\\u00e9"',
]
PARAMS = {"x": 1, "s": "a", "rx": "(a)\\1", "big": 2**70, "l": [1, 2]}

# Mostly small values (so most queries get past the parser), now and then one at a limit.
_leaf = st.one_of(
    st.sampled_from(["0", "1", "2", "0.5", "'a'", "'x'"]),
    st.sampled_from(INTS),
    st.sampled_from(FLOATS),
    st.sampled_from(STRINGS),
    st.sampled_from(
        [
            "p",
            "q",
            "r",
            "x",
            "p.name",
            "p.age",
            "q.tags",
            "r.w",
            "null",
            "true",
            "$x",
            "$s",
            "$rx",
            "$big",
            "$l",
            "$missing",
            "p.nope",
            "undefined",
        ]
    ),
)
_OPS = [
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "=",
    "<>",
    "<",
    ">=",
    "AND",
    "OR",
    "XOR",
    "IN",
    "=~",
    "STARTS WITH",
    "ENDS WITH",
    "CONTAINS",
]


def _extend(e: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda a, op, b: f"({a} {op} {b})", e, st.sampled_from(_OPS), e),
        st.builds(lambda op, a: f"({op} {a})", st.sampled_from(["NOT", "-"]), e),
        st.builds(lambda a, b: f"({a} IS {b}NULL)", e, st.sampled_from(["", "NOT "])),
        st.builds(lambda xs: f"[{', '.join(xs)}]", st.lists(e, max_size=3)),
        st.builds(lambda k, v: f"{{{k}: {v}}}", st.sampled_from(NAMES), e),
        st.builds(
            lambda f, xs: f"{f}({', '.join(xs)})", st.sampled_from(NAMES), st.lists(e, max_size=2)
        ),
        st.builds(lambda a, b: f"({a})[{b}]", e, e),
        st.builds(lambda c, a, b: f"(CASE WHEN {c} THEN {a} ELSE {b} END)", e, e, e),
        st.builds(lambda a: f"(EXISTS {{ MATCH (p)-[:K]->(q) WHERE {a} }})", e),
    )


EXPRS = st.recursive(_leaf, _extend, max_leaves=8)
_node = st.builds(
    lambda v, label: f"({v}{label})",
    st.sampled_from(["p", "q", "", "x"]),
    st.sampled_from([":P", "", ":Nope", ":P {name: 'a'}"]),
)
_rel = st.builds(
    lambda v, t, h, d: f"-[{v}{t}{h}]->" if d else f"<-[{v}{t}{h}]-",
    st.sampled_from(["r", ""]),
    st.sampled_from([":K", "", ":K|K"]),
    st.sampled_from(["", "*", "*1..2", "*2", "*0..", f"*1..{INTS[-1]}", f"*{INTS[4]}"]),
    st.booleans(),
)
PATTERNS = st.one_of(
    _node,
    st.builds(lambda a, r, b: a + r + b, _node, _rel, _node),
    st.builds(lambda a, r, b: f"shortestPath({a}{r}{b})", _node, _rel, _node),
)


@st.composite
def queries(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 2))):
        optional = draw(st.sampled_from(["", "OPTIONAL "]))
        parts.append(f"{optional}MATCH {draw(PATTERNS)}")
        if draw(st.booleans()):
            parts.append(f"WHERE {draw(EXPRS)}")
    if draw(st.booleans()):
        parts.append(f"UNWIND {draw(EXPRS)} AS u")
    if draw(st.booleans()):
        parts.append(f"WITH {draw(EXPRS)} AS a, count(*) AS c")
    items = draw(st.lists(EXPRS, min_size=1, max_size=3))
    parts.append("RETURN " + ", ".join(f"{e} AS c{i}" for i, e in enumerate(items)))
    if draw(st.booleans()):
        parts.append(f"ORDER BY {draw(EXPRS)} {draw(st.sampled_from(['', 'DESC']))}")
    for word in ("SKIP", "LIMIT"):
        if draw(st.booleans()):
            parts.append(f"{word} {draw(st.sampled_from([*INTS, '$x', '$big', '-1']))}")
    return " ".join(parts)


QUERIES = queries()
# Pieces a mutation may insert: each one a plausible token of the language.
TOKENS = [
    *NAMES,
    *INTS,
    *STRINGS,
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    ".",
    "..",
    "*",
    "-",
    "->",
    "<-",
    "=~",
    "+",
    "$x",
    "MATCH",
    "RETURN",
    "WHERE",
    "WITH",
    "UNWIND",
    "LIMIT",
    "SKIP",
    "ORDER BY",
    "AS",
    "NOT",
    "AND",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "EXISTS",
    "shortestPath",
    "'",
    '"',
    "`",
    "/*",
    "\\",
    "\x00",
    "\u202e",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(QUERIES)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "repeat"]))
        if kind == "insert":
            text = f"{text[:at]} {draw(st.sampled_from(TOKENS))} {text[at:]}"
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]
        else:  # nesting and long chains: a slice repeated many times
            end = min(len(text), at + draw(st.integers(1, 6)))
            text = text[:at] + text[at:end] * draw(st.sampled_from([2, 50, 400])) + text[end:]
    return text


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    g = gl.Graph.init(
        str(tmp_path_factory.mktemp("fuzz") / "g"),
        "node P { name: String @key\n age: I64?\n tags: [String]? }\nedge K: P -> P { w: F64? }",
    )
    with g.write() as w:
        w.insert("P", [{"name": "a", "age": 3, "tags": ["t"]}, {"name": "b"}])
        w.insert("K", [{"src": "a", "dst": "b", "w": 0.5}])
    return g


def _run(g: gl.Graph, text: str) -> None:
    with contextlib.suppress(GraphLakeError):  # typed: what every bad query must get
        g.query(text, PARAMS, max_rows=100, timeout_s=10)


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


def test_generated_queries_raise_only_typed_errors(g: gl.Graph) -> None:
    @_settings(EXAMPLES)
    @given(QUERIES)
    def run(text: str) -> None:
        _run(g, text)

    run()


def test_mutated_queries_raise_only_typed_errors(g: gl.Graph) -> None:
    @_settings(MUTATIONS)
    @given(mutated())
    def run(text: str) -> None:
        _run(g, text)

    run()
