"""shortestPath between two selected nodes: the search from both ends (through Lance's
indexes) against DuckDB's breadth-first CTE, and its bounded frontiers."""

from __future__ import annotations

import pytest

import graphlake as gl
from graphlake.query import executor
from tests.query.social import social_rows

FAN = """
node P { name: String @key }
edge K: P -> P
"""


@pytest.fixture(scope="module")
def fan(tmp_path_factory) -> gl.Graph:
    """s fans out to x0..x9; only x0 -> m -> t reaches t, which nothing else enters."""
    g = gl.Graph.init(str(tmp_path_factory.mktemp("fan") / "g"), FAN)
    xs = [f"x{i}" for i in range(10)]
    with g.write(message="fan") as w:
        w.insert("P", [{"name": n} for n in ["s", "m", "t", "y", *xs]])
        w.insert(
            "K",
            [{"id": f"sx{i}", "src": "s", "dst": x} for i, x in enumerate(xs)]
            + [{"id": f"xy{i}", "src": x, "dst": "y"} for i, x in enumerate(xs)]
            + [{"id": "xm", "src": "x0", "dst": "m"}, {"id": "mt", "src": "m", "dst": "t"}],
        )
    return g


def test_the_search_from_both_ends_expands_the_small_side(fan, monkeypatch):
    """A frontier of 10 from s is above the cap of 3; the side of t stays at one node, so
    the search still answers (its rows replace the CTE) with the one shortest path."""
    monkeypatch.setattr(executor, "PREFETCH_MAX_IDS", 3)
    q = (
        "MATCH p = shortestPath((a:P {name: 's'})-[:K*..6]->(b:P {name: 't'})) "
        "RETURN length(p), nodes(p), relationships(p)"
    )
    assert fan.query(q).to_pylist() == [
        {
            "length(p)": 3,
            "nodes(p)": ["s", "x0", "m", "t"],
            "relationships(p)": ["K:sx0", "K:xm", "K:mt"],
        }
    ]
    plan = fan.query(q, explain=True).to_pylist()
    assert any("_found" in step["sql"] for step in plan)  # answered by the search


def test_a_search_too_wide_on_both_sides_falls_back_to_the_cte(fan, monkeypatch):
    monkeypatch.setattr(executor, "PREFETCH_MAX_IDS", 0)
    q = "MATCH p = shortestPath((a:P {name: 's'})-[:K*..6]->(b:P {name: 'y'})) RETURN length(p)"
    assert fan.query(q).to_pylist() == [{"length(p)": 2}]
    assert not any("_found" in s["sql"] for s in fan.query(q, explain=True).to_pylist())


PAIRS = [("p00", "p07"), ("p03", "p03"), ("p10", "p21"), ("p25", "p01")]
SHAPES = ["<-[:Follows*..6]-", "-[:Follows*..2]-", "-[:Knows*0..4]->"]


@pytest.mark.parametrize("shape", SHAPES)
def test_pairs_match_the_cte_and_are_paths(social, monkeypatch, shape):
    """Same lengths (or no path) as DuckDB's search for each pair; every path returned is
    a real one: each edge joins its two neighbouring nodes in the pattern's direction."""
    q = (
        f"MATCH p = shortestPath((a:Person {{name: $a}}){shape}(b:Person {{name: $b}})) "
        "RETURN length(p), nodes(p), relationships(p)"
    )
    edges = {
        f"{t}:{e['id']}": (e["src"], e["dst"])
        for t, es in social_rows().items()
        if t in ("Knows", "Follows")
        for e in es
    }
    by_search = [social.query(q, {"a": a, "b": b}).to_pylist() for a, b in PAIRS]
    monkeypatch.setattr(executor, "SEARCH_MAX_STARTS", 0)
    by_cte = [social.query(q, {"a": a, "b": b}).to_pylist() for a, b in PAIRS]
    assert [[r["length(p)"] for r in rs] for rs in by_search] == [
        [r["length(p)"] for r in rs] for rs in by_cte
    ]
    assert any(by_search)
    for (a, b), rs in zip(PAIRS, by_search, strict=True):
        for r in rs:
            nodes = r["nodes(p)"]
            assert (nodes[0], nodes[-1], len(nodes)) == (a, b, r["length(p)"] + 1)
            for x, y, e in zip(nodes[:-1], nodes[1:], r["relationships(p)"], strict=True):
                ends = edges[e]
                ok = {"->": [(x, y)], "<-": [(y, x)], "-": [(x, y), (y, x)]}
                way = "<-" if shape.startswith("<") else "->" if shape.endswith(">") else "-"
                assert ends in ok[way]


def test_ends_selected_by_constants_need_no_duckdb_statement_before_the_search(fan, monkeypatch):
    """Both ends are read by Lance lookups: one DuckDB statement in all (the query)."""
    statements = []
    run_sql = executor.run_sql
    monkeypatch.setattr(
        executor, "run_sql", lambda *a, **k: statements.append(a[1]) or run_sql(*a, **k)
    )
    q = "MATCH p = shortestPath((a:P {name: 's'})-[:K*..6]->(b:P {name: $t})) RETURN length(p)"
    assert fan.query(q, {"t": "t"}).to_pylist() == [{"length(p)": 3}]
    assert len(statements) == 1
