"""Anchored traversals on the adjacency (query.traverse) against the SQL executor on the
same queries: equal result multisets and schemas, explain naming the executor, and the
row and memory limits as typed errors."""

from __future__ import annotations

import random

import pytest

import graphlake as gl
from graphlake.adjacency import load
from graphlake.adjacency.cache import CACHE
from graphlake.adjacency.load import adjacency
from graphlake.errors import AdjacencyTooLargeError, QueryError
from graphlake.query import executor
from graphlake.read.sql import SqlLimits

SCHEMA = """
node P { name: String @key  age: I32?  score: F64?  ok: Bool? }
node C { name: String @key }
edge K: P -> P
edge W: P -> C
"""
NAMES = [f"n{i:02d}" for i in range(14)]

# Each runs on the CSR (checked) and again as SQL; $s is every node and a missing one.
QUERIES = [
    "MATCH (a:P {name: $s})-[:K]->(b) RETURN count(b)",
    "MATCH (a:P {name: $s})-[:K]->(b) RETURN b.name, b.age, b.score, b.ok",
    "MATCH (a:P {name: $s})<-[:K]-(b)-[:K]-(c) RETURN c.name",
    "MATCH (a:P {name: $s})-[:K]->()-[:K]->()-[:K]->(d) RETURN d.name",
    "MATCH (a:P {name: $s})-[:K]->()-[:K]->()-[:K]->(d) RETURN count(d), count(DISTINCT d)",
    "MATCH (a:P {name: $s})-[:K*1..3]-(c) RETURN c.name",
    "MATCH (a:P {name: $s})-[:K*0..3]->(c) WHERE c.age >= 30 RETURN count(*)",
    "MATCH (a:P {name: $s})-[:K*2]->(b)-[:K]->(c)<-[:K*..2]-(d) RETURN d.name",
    "MATCH (a:P {name: $s})-[:K*..4]->(b) WHERE 20 < b.age RETURN count(b)",
    "MATCH (a:P {name: $s})-[:W]->(c)<-[:W]-(b) RETURN b.name",
    "MATCH (a:P {name: $s})-[:K]->(b)-[:W]->(c:C) RETURN c.name",
    "MATCH (a:P)-[:K]->(b) WHERE a.name = $s AND b.age <> 10 RETURN b.age",
    "MATCH (a:P)-[:K]->(b {ok: true}) WHERE a.name = $s AND b.score < 0.5 RETURN b.name",
    "MATCH (b)-[:K]->(c)-[:K]->(a:P {name: $s}) RETURN b.name, c.name",
    "MATCH (c:C {name: 'c1'})<-[:W]-(b)-[:K]->(x {age: 10}) RETURN x.name",
    "MATCH (a:P {name: $s})-[r:K]->(b) RETURN b.name, r.id",  # relationship variables
    "MATCH (a:P {name: $s})-[r:K]-(b)-[r2:K]->(c) RETURN r.id, r2.id, c.name",
    "MATCH (a:P {name: $s})-[r:W]->(c) RETURN count(r), count(*)",
]


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    rng = random.Random(7)
    g = gl.Graph.init(str(tmp_path_factory.mktemp("trav") / "g"), SCHEMA)
    with g.write(message="seed") as w:
        w.insert(
            "P",
            [
                {
                    "name": n,
                    "age": rng.choice([None, 10, 30, 50]),
                    "score": rng.choice([None, 0.25, 0.75]),
                    "ok": rng.choice([None, True, False]),
                }
                for n in NAMES
            ],
        )
        w.insert("C", [{"name": "c1"}, {"name": "c2"}])
        w.insert("K", [{"src": rng.choice(NAMES), "dst": rng.choice(NAMES)} for _ in range(36)])
        w.insert("K", [{"src": "n03", "dst": "n03"}])  # a self-loop
        w.insert(
            "W", [{"src": rng.choice(NAMES), "dst": rng.choice(["c1", "c2"])} for _ in range(9)]
        )
    return g


@pytest.mark.parametrize("q", QUERIES)
def test_the_csr_executor_agrees_with_sql(g, q, monkeypatch):
    plan = g.query(q, {"s": "n03"}, explain=True)
    assert set(plan.column("executor").to_pylist()) == {"csr"}, q
    assert plan.column("rows")[-1].as_py() == g.query(q, {"s": "n03"}).num_rows
    for s in [*NAMES[:4], "missing"]:
        monkeypatch.setattr(executor, "CSR_TRAVERSAL", True)
        csr = g.query(q, {"s": s})
        monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
        sql = g.query(q, {"s": s})
        assert csr.schema == sql.schema
        assert sorted(csr.to_pylist(), key=repr) == sorted(sql.to_pylist(), key=repr), (q, s)


@pytest.mark.parametrize(
    "q",
    [
        "MATCH (a:P {name: $s})-[r:K]->(b) RETURN b.name, r",  # a relationship returned
        "MATCH (a:P {name: $s})-[:K]->(b) RETURN b.name ORDER BY b.name",
        "MATCH (a:P {name: $s})-[:K]->(b) WITH b RETURN b.name",
        "MATCH (a:P {name: $s})-[:K]->(b) RETURN b",
        "MATCH (a:P {name: $s})-[:K]->(b) WHERE b.age > 1 OR b.age < 0 RETURN b.name",
    ],
)
def test_other_shapes_bind_on_the_csr_and_finish_in_sql(g, q, monkeypatch):
    """Not traversals alone: the MATCH runs on the adjacency, the rest in DuckDB over its
    rows (tests/query/test_bindings.py has many more)."""
    plan = g.query(q, {"s": "n01"}, explain=True).to_pylist()
    assert [p["executor"] for p in plan][-1] == "sql"
    assert any(p["operation"].startswith("bind ") for p in plan)
    csr = g.query(q, {"s": "n01"})
    monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
    sql = g.query(q, {"s": "n01"})
    assert csr.schema == sql.schema
    assert sorted(csr.to_pylist(), key=repr) == sorted(sql.to_pylist(), key=repr)


def test_explain_reports_each_operator(g):
    plan = g.query(
        "MATCH (a:P {name: 'n01'})-[:K*1..2]->(b) WHERE b.age > 20 RETURN count(*)", explain=True
    ).to_pylist()
    ops = [p["operation"] for p in plan]
    assert ops[0].startswith("start: a") and ops[1] == "walk K *1..2 from a"
    assert ops[2] == "filter b.age > 20" and ops[-1] == "RETURN count(*)"
    assert plan[0]["rows"] == 1 and all(p["seconds"] >= 0 and p["sql"] for p in plan)


def test_row_and_memory_limits_are_typed_errors(g, monkeypatch):
    q = "MATCH (a:P {name: 'n03'})-[:K*1..3]-(b) RETURN b.name"
    rows = g.query(q).num_rows
    assert rows > 2
    with pytest.raises(QueryError, match="more than 2 rows"):
        g.query(q, max_rows=2)
    CACHE.clear()
    snap = g.snapshot()
    with pytest.raises(AdjacencyTooLargeError, match="adjacency of K"):
        adjacency(snap, "K", max_bytes=0)
    assert executor.run_query(snap, q, limits=SqlLimits(memory_limit_mb=64)).num_rows == rows
    # An adjacency past the query's memory limit is never built: the SQL plan answers.
    expected = sorted(g.query(q).column(0).to_pylist())
    CACHE.clear()
    monkeypatch.setattr(load, "estimated_bytes", lambda *_: 2**50)
    limits = SqlLimits(memory_limit_mb=64)
    answer = executor.run_query(snap, q, limits=limits)
    assert sorted(answer.column(0).to_pylist()) == expected
    plan = executor.run_query(snap, q, limits=limits, explain=True)
    assert set(plan.column("executor").to_pylist()) <= {"sql", "lance"}


def test_a_write_is_seen_by_the_next_traversal(g, tmp_path):
    h = gl.Graph.init(str(tmp_path / "h"), SCHEMA)
    with h.write(message="a") as w:
        w.insert("P", [{"name": "x"}, {"name": "y"}, {"name": "z"}])
        w.insert("K", [{"src": "x", "dst": "y"}])
    q = "MATCH (a:P {name: 'x'})-[:K*1..2]->(b) RETURN b.name"
    assert h.query(q).to_pylist() == [{"b.name": "y"}]
    with h.write(message="b") as w:
        w.insert("K", [{"src": "y", "dst": "z"}])
    assert sorted(h.query(q).column("b.name").to_pylist()) == ["y", "z"]
    assert h.query(q, branch="main~1").to_pylist() == [{"b.name": "y"}]


@pytest.mark.parametrize("shape", ["-[:K*..6]->", "<-[:K*..3]-", "-[:K*..4]-", "-[:K*0..5]->"])
def test_shortest_paths_on_the_csr_agree_with_the_lance_search_and_sql(g, shape, monkeypatch):
    """Lengths equal to the Lance-index search's and DuckDB's; every path returned is
    real (each edge joins its neighbours in the pattern's direction)."""
    q = (
        f"MATCH p = shortestPath((a:P {{name: $a}}){shape}(b:P {{name: $b}})) "
        "RETURN length(p), nodes(p), relationships(p)"
    )
    edges = {f"K:{r['id']}": (r["src"], r["dst"]) for r in g.edges("K").to_pylist()}
    pairs = [("n00", "n07"), ("n03", "n03"), ("n10", "n12"), ("n05", "n01"), ("n02", "zz")]
    longest = 0
    for a, b in pairs:
        got = g.query(q, {"a": a, "b": b}).to_pylist()
        plan = g.query(q, {"a": a, "b": b}, explain=True)
        assert "csr" in plan.column("executor").to_pylist()
        monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
        lance = g.query(q, {"a": a, "b": b}).to_pylist()
        monkeypatch.setattr(executor, "PREFETCH_MAX_IDS", 0)  # the recursive CTE
        sql = g.query(q, {"a": a, "b": b}).to_pylist()
        monkeypatch.undo()
        lengths = [[r["length(p)"] for r in x] for x in (got, lance, sql)]
        assert lengths[0] == lengths[1] == lengths[2], (shape, a, b)
        longest = max([longest, *lengths[0]])
        for r in got:
            nodes, rels = r["nodes(p)"], r["relationships(p)"]
            assert nodes[0] == a and nodes[-1] == b and len(rels) == len(nodes) - 1
            for x, y, e in zip(nodes[:-1], nodes[1:], rels, strict=True):
                ends = edges[e]
                ok = {"out": ends == (x, y), "in": ends == (y, x)}
                ok["both"] = ok["out"] or ok["in"]
                way = "in" if shape.startswith("<") else "both" if shape.endswith("]-") else "out"
                assert ok[way], (shape, a, b, r)
    assert longest >= 2  # the pairs exercise real searches


def test_generated_anchored_queries_run_on_the_csr_and_agree_with_sql(social, monkeypatch):
    """The oracle's generated traversals (tests/query/queries.anchored, also compared
    with LadybugDB in test_oracle): every one runs on the adjacency, and the SQL
    executor gives the same rows."""
    from tests.query.queries import anchored

    nonempty = 0
    for q, _ in anchored(60):
        monkeypatch.setattr(executor, "CSR_TRAVERSAL", True)
        plan = social.query(q, explain=True)
        assert set(plan.column("executor").to_pylist()) == {"csr"}, q
        csr = social.query(q)
        monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
        sql = social.query(q)
        assert csr.schema == sql.schema, q
        assert sorted(csr.to_pylist(), key=repr) == sorted(sql.to_pylist(), key=repr), q
        nonempty += any(v not in (0, None) for r in csr.to_pylist() for v in r.values())
    assert nonempty >= 30


def test_repeated_texts_reuse_the_plan_with_new_values(g, monkeypatch):
    """A traversal planned once is bound to new parameter values without planning;
    other parameter types plan again (and fail or run as the planner says)."""
    from graphlake.errors import CypherTypeError
    from graphlake.query import planner

    q = "MATCH (a:P {name: $s})-[:K*1..2]->(b) WHERE b.age > $x RETURN count(*)"
    calls = []
    real = planner.plan_query
    monkeypatch.setattr(
        executor, "plan_query", lambda *a: calls.append(1) or real(*a), raising=True
    )
    got = {}
    for s in NAMES[:5]:
        for x in (0, 20, 40):
            got[s, x] = g.query(q, {"s": s, "x": x}).to_pylist()
    assert len(calls) <= 1  # planned once (or zero times: cached by an earlier test)
    monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
    for (s, x), rows in got.items():
        assert g.query(q, {"s": s, "x": x}).to_pylist() == rows
    monkeypatch.setattr(executor, "CSR_TRAVERSAL", True)
    assert g.query(q, {"s": "n01", "x": 20.5}).num_rows == 1  # a float: planned again
    with pytest.raises(CypherTypeError):
        g.query(q, {"s": "n01", "x": "old"})
    assert g.query(q, {"s": None, "x": 1}).to_pylist() == [{"count(*)": 0}]


UNANCHORED = [
    "MATCH (a:P)-[:K]->(b) RETURN a.name, b.name",
    "MATCH (a)-[:K]->(b) RETURN b.name",  # unlabelled: the edge type's source type
    "MATCH (c)<-[:W]-(b)-[:K]->(x) RETURN count(*)",
    "MATCH (a:P)-[:K*1..3]->(b) RETURN count(*), count(DISTINCT b)",
    "MATCH (a:P {age: 10})-[:K]-(b)-[:W]->(c) RETURN count(DISTINCT c), count(*)",
    "MATCH (a:P)-[:K*0..2]-(b) WHERE a.age > 20 AND b.age < 40 RETURN a.name, b.age",
    "MATCH (a:C)<-[:W]-(b)-[:K]->(c) RETURN count(c)",
    "MATCH (a {age: 10})-[:K]->(b) RETURN a.name, b.name",  # an unlabelled start's map
    "MATCH (:P {age: 30})-[:K]-(b) RETURN count(*)",  # an anonymous start's
]


@pytest.mark.parametrize("q", UNANCHORED)
def test_unanchored_chains_start_at_every_node(g, q, monkeypatch):
    plan = g.query(q, explain=True).to_pylist()
    assert {p["executor"] for p in plan} == {"csr"} and "every" in plan[0]["operation"]
    csr = g.query(q)
    monkeypatch.setattr(executor, "CSR_TRAVERSAL", False)
    sql = g.query(q)
    assert csr.schema == sql.schema
    assert sorted(csr.to_pylist(), key=repr) == sorted(sql.to_pylist(), key=repr)


def test_too_many_paths_run_as_sql(g, monkeypatch):
    from graphlake.query import traverse

    q = "MATCH (a:P)-[:K*1..3]-(b) RETURN count(*)"
    expected = g.query(q).to_pylist()
    monkeypatch.setattr(traverse, "MAX_PATHS", 5)
    assert g.query(q).to_pylist() == expected
    assert set(g.query(q, explain=True).column("executor").to_pylist()) == {"sql"}


def test_the_time_limit_holds_between_levels(g):
    from graphlake.errors import QueryTimeoutError

    with pytest.raises(QueryTimeoutError, match="timed out"):
        g.query("MATCH (a:P)-[:K*1..3]-(b) RETURN count(*)", timeout_s=1e-9)
