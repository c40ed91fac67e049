"""Hard limits on Cypher input (issue 22, items 5-6): integers past an I64 in literals,
`LIMIT`/`SKIP` and hop bounds are syntax errors at their token (not Python's 4,300-digit
conversion error), and a known `=~` pattern meets the RE2 caps `@check` has."""

from __future__ import annotations

import time

import pytest

import graphlake as gl
from graphlake.errors import CypherError, CypherSyntaxError

BIG = "9" * 5000


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    g = gl.Graph.init(
        str(tmp_path_factory.mktemp("limits") / "g"), "node P { name: String @key }\nedge K: P -> P"
    )
    with g.write() as w:
        w.insert("P", [{"name": "a"}, {"name": "b"}])
        w.insert("K", [{"src": "a", "dst": "b"}])
    return g


@pytest.mark.parametrize(
    "query",
    [
        f"RETURN {BIG} AS x",
        f"RETURN -{BIG} AS x",
        "RETURN 9223372036854775808 AS x",
        f"MATCH (p:P) RETURN p.name LIMIT {BIG}",
        f"MATCH (p:P) RETURN p.name SKIP {BIG}",
        f"MATCH (a:P)-[*1..{BIG}]->(b:P) RETURN b.name",
        f"MATCH (a:P)-[*{BIG}]->(b:P) RETURN b.name",
        f"MATCH (a:P)-[*{BIG}..]->(b:P) RETURN b.name",
        f"UNWIND [1, {BIG}] AS x RETURN x",
    ],
)
def test_huge_integers_are_syntax_errors(g: gl.Graph, query: str) -> None:
    with pytest.raises(CypherSyntaxError, match="too large") as info:
        g.query(query)
    # The error points at the number (the first digit past any minus sign).
    assert (info.value.line, info.value.column) == (
        1,
        query.index("922" if "922" in query else BIG) + 1,
    )
    assert len(str(info.value)) < 300


def test_huge_floats_are_syntax_errors(g: gl.Graph) -> None:
    with pytest.raises(CypherSyntaxError, match="too large"):
        g.query(f"RETURN {BIG}.5e999 AS x")


def test_the_largest_integer_still_works(g: gl.Graph) -> None:
    assert g.query("RETURN 9223372036854775807 AS x").column("x").to_pylist() == [2**63 - 1]
    assert g.query("RETURN 0009 AS x").column("x").to_pylist() == [9]


@pytest.mark.parametrize(
    "pattern",
    [
        "(a)\\\\1",
        "a{4294967296}",
        "(" * 51 + ")" * 51,
        "x" * 1001,
        "[\\\\pL\\\\pN]{50}",
    ],
)
def test_known_regex_patterns_meet_the_caps(g: gl.Graph, pattern: str) -> None:
    with pytest.raises(CypherError, match="invalid regex for =~"):
        g.query(f"MATCH (p:P) WHERE p.name =~ '{pattern}' RETURN p.name")
    raw = pattern.replace("\\\\", "\\")
    with pytest.raises(CypherError, match="invalid regex for =~"):
        g.query("MATCH (p:P) WHERE p.name =~ $rx RETURN p.name", {"rx": raw})


def test_regex_match_is_linear(g: gl.Graph) -> None:
    t0 = time.perf_counter()
    out = g.query("RETURN $s =~ '(a+)+' AS m", {"s": "a" * 50_000 + "!"})
    assert out.column("m").to_pylist() == [False]
    assert time.perf_counter() - t0 < 5.0  # a hang guard: `re` would never finish
