"""`POST /branches/{b}/query`: Cypher over HTTP, read scope, the server's SQL limits."""

from __future__ import annotations

import httpx

from tests.server.harness import SQL_MAX_ROWS, head


def test_query_with_parameters_on_a_pinned_snapshot(reader: httpx.Client) -> None:
    r = reader.post(
        "/branches/main/query",
        json={
            "query": "MATCH (a:Person)-[k:Knows]->(b) WHERE a.age >= $age "
            "RETURN a.name, b.name AS friend, k.since ORDER BY a.name",
            "params": {"age": 30},
        },
    )
    assert r.status_code == 200, r.text
    assert r.json() == {
        "commit": head(reader, "main"),
        "columns": ["a.name", "friend", "k.since"],
        "rows": [["Alice", "Bob", "2020-05-01"]],
        "logical_plan": None,
    }


def test_explain_returns_the_steps_and_the_logical_plan(reader: httpx.Client) -> None:
    text = "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name ORDER BY b.name"
    r = reader.post(
        "/branches/main/query", json={"query": text, "params": {"s": "Alice"}, "explain": True}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["columns"] == ["step", "operation", "rows", "seconds", "sql", "executor"]
    steps = [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]
    assert steps[-1]["rows"] == 1 and {s["executor"] for s in steps} == {"csr", "sql"}
    # the lines `graphlake query --explain` prints: top-down, each with its executor
    assert body["logical_plan"] == [
        "Sort b.name  [sql]",
        "Project b.name  [sql]",
        "Expand (a)-[:Knows]->(b)  [csr]",
        "Lookup (a:Person) by name = $s  [csr]",
    ]
    plain = reader.post("/branches/main/query", json={"query": text, "params": {"s": "Alice"}})
    assert plain.json()["rows"] == [["Bob"]] and plain.json()["logical_plan"] is None


def test_query_errors_are_typed_4xx(reader: httpx.Client, anon: httpx.Client) -> None:
    cases = {
        "MATCH (a:Person RETURN a": "CypherSyntaxError",
        "MATCH (a:Persn) RETURN a": "CypherNameError",
        "MATCH (a:Person) WHERE a.age = 'x' RETURN a": "CypherTypeError",
        "MATCH (a:Person) DETACH DELETE a": "CypherWriteError",
        "MATCH (a:Person) WHERE a.age > $age RETURN a": "CypherParameterError",
    }
    for text, kind in cases.items():
        r = reader.post("/branches/main/query", json={"query": text})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == kind, r.text
    r = reader.post(
        "/branches/main/query",
        json={"query": "UNWIND range(1, $n) AS x RETURN x", "params": {"n": SQL_MAX_ROWS + 1}},
    )
    assert r.status_code == 400 and "more than" in r.json()["error"]["message"]
    assert anon.post("/branches/main/query", json={"query": "RETURN 1"}).status_code == 401
    assert reader.post("/branches/nope/query", json={"query": "RETURN 1"}).status_code == 404
    assert reader.post("/branches/main/query", json={"query": ""}).status_code == 422
