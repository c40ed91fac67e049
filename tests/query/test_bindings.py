"""A query's first MATCH on the adjacency, the rest in DuckDB over its rows
(query.traverse.bind, `Plan.csr_match`), against the whole query as SQL
(`executor.CSR_TRAVERSAL = False`, the switch tests and bench/query.py use): generated
queries for every operator that can follow such a MATCH, on the social graph
(self-loops, parallel edges, cycles, nulls); relationship uniqueness against a brute-force
enumeration of trails; shapes that stay SQL; the memory limit. The same generated queries
are compared with LadybugDB in test_oracle."""

from __future__ import annotations

import itertools

import pytest

import graphlake as gl
from graphlake.adjacency import load
from graphlake.query import executor
from tests.query.queries import bound

BOUND = bound(80)


def _both(g, q: str, params: dict | None = None) -> tuple:
    plan = g.query(q, params, explain=True).to_pylist()
    executor.CSR_TRAVERSAL = True
    try:
        csr = g.query(q, params)
    finally:
        executor.CSR_TRAVERSAL = False
    try:
        sql = g.query(q, params)
    finally:
        executor.CSR_TRAVERSAL = True
    return plan, csr, sql


def _rows(table) -> list:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def _bound(plan: list[dict]) -> bool:
    """The plan ran a MATCH on the adjacency (its rows bound for SQL, or a whole
    traversal there)."""
    return any(p["executor"] == "csr" for p in plan)


def test_generated_queries_agree_with_sql(social):
    bad, on_csr, nonempty = [], 0, 0
    for q, _ in BOUND:
        plan, csr, sql = _both(social, q)
        on_csr += _bound(plan)
        nonempty += csr.num_rows > 0
        if csr.schema != sql.schema or _rows(csr) != _rows(sql):
            bad.append(q)
        elif " ORDER BY " in q and csr.to_pylist() != sql.to_pylist():  # a total order
            bad.append(f"order: {q}")
    assert not bad, f"{len(bad)} differ:\n" + "\n".join(bad[:10])
    assert on_csr == len(BOUND)  # every generated shape binds on the adjacency
    assert nonempty >= len(BOUND) // 2


# Shapes only this test compares (LadybugDB spells or answers them differently).
HAND = [
    "MATCH (a:Person {name: 'p04'})-[r:Knows*1..3]->(b) RETURN b.name, r",
    "MATCH (b)<-[r:Knows*1..2]-(a:Person {name: 'p02'}) RETURN b.name, r, size(r)",
    "MATCH (a:Person {name: 'p00'})-[r:Knows]-(b) RETURN r, b, labels(b), type(r)",
    "MATCH (a:Person {name: 'p02'})-[r:Knows]->(b) RETURN startNode(r), endNode(r), id(b)",
    "MATCH (a:Person)-[r:Knows]->(a2) WHERE r.weight > 0.3 "
    "RETURN a.name, size(collect(DISTINCT a2.name))",
    "MATCH (a:Person {name: 'p05'})-[:Knows*0..2]-(b) WITH DISTINCT b "
    "RETURN b.name ORDER BY b.name SKIP 1 LIMIT 3",
    "MATCH (a:Person {name: 'p04'})-[r1:Knows]->(b)-[r2:Knows]->(c) RETURN r1.id, r2.id, c.name "
    "ORDER BY r1.id, r2.id",
    "MATCH (a:Person {name: 'p01'})-[:Knows]->(b) UNWIND [1, 2] AS x RETURN b.name, x",
    "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) WHERE (b)-[:WorksAt]->() RETURN b.name",
    "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) "
    "WHERE EXISTS { MATCH (b)-[:Follows]->(c) WHERE c.age > 30 } RETURN b.name",
    "MATCH (a:Person)-[:Follows]->(b) WHERE a.name IN $names RETURN a.name, b.name",
    "MATCH (a:Person {name: $s})-[:Follows]->(b) RETURN b.name, b.born, b.score",
    "MATCH (n:Person {name: 'p03'}) RETURN n.name, n.born, n.score, n",
    "MATCH (n:Person {name: $s}) WHERE n.born > date('1990-01-01') RETURN n.name, n.born",
    "MATCH (c:Company {name: 'c1'})<-[w:WorksAt]-(p) RETURN p.name, w.role, w",
    "MATCH (a:Person)-[:Knows]->(b:Person {name: 'p03'}) RETURN a.name, a",
    "MATCH (a:Person {name: 'p00'})-[:Knows]->(b) MATCH (b)-[:Knows]->(c) RETURN b.name, c.name",
]


@pytest.mark.parametrize("q", HAND)
def test_hand_written_shapes_bind_on_the_adjacency_and_agree(social, q):
    params = {"s": "p03", "names": ["p01", "p02"]}
    plan, csr, sql = _both(social, q, params)
    assert any(p["operation"].startswith("bind ") for p in plan), plan
    assert csr.schema == sql.schema, q
    assert _rows(csr) == _rows(sql), q
    if " ORDER BY " in q:
        assert csr.to_pylist() == sql.to_pylist()


@pytest.mark.parametrize(
    "q",
    [
        "MATCH p = (a:Person {name: 'p02'})-[:Knows]->(b) RETURN length(p)",  # a path
        "OPTIONAL MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name",
        "MATCH (a:Person {name: 'p02'}), (b:Person {name: 'p03'}) RETURN a.name, b.name",
        "MATCH (a:Person {name: 'p02'})-[r:Knows {since: 2001}]->(b) RETURN b.name",
        "MATCH (a:Person {name: 'p03'})-[:Knows|Follows]->(b) RETURN b.name",
        "MATCH (a:Person {name: 'p02'})-[:Knows]->(a) RETURN a.name",  # a cycle
        "UNWIND ['p01'] AS s MATCH (a:Person {name: s})-[:Knows]->(b) RETURN b.name",
        "MATCH (n:Person) RETURN n.city, count(*)",  # a whole node table: DuckDB's scan
    ],
)
def test_other_first_matches_run_as_sql(social, q):
    plan = social.query(q, explain=True)
    assert "csr" not in plan.column("executor").to_pylist()


def test_relationship_properties_alone_stay_wholly_on_the_adjacency(social):
    q = "MATCH (a:Person {name: $s})-[r:Knows]-(b) RETURN b.name, r.id, r.since, r.weight"
    for s in ("p00", "p02", "p04", "nobody"):
        plan, csr, sql = _both(social, q, {"s": s})
        assert {p["executor"] for p in plan} == {"csr"}
        assert csr.schema == sql.schema and _rows(csr) == _rows(sql)


def test_explain_lists_the_adjacency_steps_then_the_sql(social):
    q = "MATCH (a:Person {name: 'p04'})-[r:Knows]->(b) WHERE b.age > 20 OR r.since > 2000 "
    q += "RETURN b.name ORDER BY b.name"
    plan = social.query(q, explain=True).to_pylist()
    kinds = [p["executor"] for p in plan]
    assert (
        kinds[: kinds.index("sql")] == ["csr"] * kinds.index("sql")
        and "csr" not in kinds[kinds.index("sql") :]
    )
    bind = next(p for p in plan if p["operation"].startswith("bind "))
    assert bind["operation"] == "bind a, b, r" and bind["rows"] >= 2
    assert plan[-1]["rows"] == social.query(q).num_rows


def _trails(edges: list[tuple[str, str, str]], start: str, low: int, high: int) -> list:
    """Every (end, edge ids) of a directed path from `start` of low..high edges that
    uses no edge twice (brute force)."""
    out = []
    for n in range(low, high + 1):
        for seq in itertools.product(edges, repeat=n):
            ids = [e[0] for e in seq]
            if len(set(ids)) != n:
                continue
            at, ok = start, True
            for _, src, dst in seq:
                ok = ok and src == at
                at = dst
            if ok:
                out.append((at, ids))
    return out


def test_relationship_uniqueness_holds_on_bound_matches(tmp_path):
    """Self-loops, parallel edges and a cycle: no relationship twice in one match, for
    variable-length relationship variables and across fixed ones, in both executors."""
    g = gl.Graph.init(str(tmp_path / "g"), "node N { name: String @key }\nedge E: N -> N")
    edges = [("e1", "x", "x"), ("e2", "x", "y"), ("e3", "x", "y"), ("e4", "y", "z")]
    edges += [("e5", "z", "x"), ("e6", "y", "x")]
    with g.write(message="m") as w:
        w.insert("N", [{"name": n} for n in "xyz"])
        w.insert("E", [{"id": i, "src": s, "dst": d} for i, s, d in edges])
    for start in "xyz":
        q = f"MATCH (a:N {{name: '{start}'}})-[r:E*1..4]->(b) RETURN b.name, r"
        expected = sorted((b, [f"E:{i}" for i in ids]) for b, ids in _trails(edges, start, 1, 4))
        plan, csr, sql = _both(g, q)
        assert any(p["operation"].startswith("bind ") for p in plan)
        for table in (csr, sql):
            got = sorted((r["b.name"], r["r"]) for r in table.to_pylist())
            assert got == expected, start
    q = "MATCH (a:N)-[r1:E]-(b)-[r2:E]-(c) RETURN r1.id, r2.id"
    _, csr, sql = _both(g, q)
    assert _rows(csr) == _rows(sql) and csr.num_rows > 0
    assert all(r["r1.id"] != r["r2.id"] for r in csr.to_pylist())


def test_bindings_past_the_memory_limit_run_as_sql(social, monkeypatch):
    q = "MATCH (a:Person)-[r:Knows]->(b) RETURN DISTINCT a.name, r.id, b.name"
    expected = _rows(social.query(q))
    monkeypatch.setattr(load, "estimated_bytes", lambda *_: 0)  # the adjacency fits
    monkeypatch.setattr(executor, "_max_bytes", lambda _: 4096)  # its bindings do not
    plan = social.query(q, explain=True)
    assert "csr" not in plan.column("executor").to_pylist()
    assert _rows(social.query(q)) == expected
