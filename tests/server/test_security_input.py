"""Client input against a real server (issue 22, items 5-6): a backtracking `@check` regex,
integers past Python's 4,300-digit limit, deep nesting and out-of-range Vector dimensions
each get a typed 4xx in bounded time, and `/health` keeps answering, during writes too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest

import graphlake as gl
from tests.server.harness import ADMIN_TOKEN, READ_TOKEN, WRITE_TOKEN, Server, write_config

BIG = "9" * 5000
SCHEMA = """
node Doc { name: String @key
  body: String? @check("(a+)+") }
node P { name: String @key }
edge K: P -> P
"""
BODY_LIMIT = 4 * 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("security-input")
    g = gl.Graph.init(d / "graph", SCHEMA)
    with g.write() as w:
        w.insert("P", [{"name": "a"}, {"name": "b"}])
        w.insert("K", [{"src": "a", "dst": "b"}])
    config = write_config(
        d / "server.toml", protected=[], limits={"max_body_bytes": BODY_LIMIT, "sql_timeout_s": 10}
    )
    srv = Server(d / "graph", d, ["--config", str(config), "--log-level", "warning"]).start()
    with srv.client(READ_TOKEN) as c:  # wait for a query worker, so timings measure queries
        assert c.post("/branches/main/query", json={"query": "RETURN 1 AS x"}).status_code == 200
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def clients(server: Server) -> Iterator[dict[str, httpx.Client]]:
    with (
        server.client(READ_TOKEN) as r,
        server.client(WRITE_TOKEN) as w,
        server.client(ADMIN_TOKEN) as a,
        server.client() as anon,
    ):
        yield {"read": r, "write": w, "admin": a, "anon": anon}


def _healthy(anon: httpx.Client) -> float:
    t0 = time.perf_counter()
    assert anon.get("/health").status_code == 200
    return time.perf_counter() - t0


def _error(r: httpx.Response, status: int, type_: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["type"] == type_, r.text
    return r.json()["error"]["message"]


def test_backtracking_check_answers_at_once(clients: dict[str, httpx.Client]) -> None:
    # Python's `re` took 13.6 s on 28 "a"s (doubling with each more), /health waiting.
    warm = clients["write"].post(
        "/branches/main/mutations",
        json={
            "operations": [
                {"op": "insert", "table": "Doc", "rows": [{"name": "warm", "body": "aaa"}]}
            ]
        },
    )
    assert warm.status_code == 200, warm.text  # the server's first write imports the writers
    for n in (28, 40, 100_000):
        t0 = time.perf_counter()
        r = clients["write"].post(
            "/branches/main/mutations",
            json={
                "operations": [
                    {"op": "insert", "table": "Doc", "rows": [{"name": "d", "body": "a" * n + "!"}]}
                ]
            },
        )
        assert "does not match @check" in _error(r, 422, "ValueConstraintError")
        assert time.perf_counter() - t0 < 5.0  # a hang guard: `re` took 13.6 s on 28
    assert _healthy(clients["anon"]) < 1.0


def test_health_answers_during_checked_writes(clients: dict[str, httpx.Client]) -> None:
    # Backtracking attacks (with Python's `re`, 30 "a"s held the GIL for ~50 s) and large
    # checked upserts (3 MB of values) while another client polls /health.
    attack = [{"op": "insert", "table": "Doc", "rows": [{"name": "x", "body": "a" * 30 + "!"}]}]
    big = [
        {
            "op": "upsert",
            "table": "Doc",
            "rows": [{"name": f"big{i}", "body": "a" * 100_000} for i in range(30)],
        }
    ]
    idle = max(_healthy(clients["anon"]) for _ in range(30))
    latencies: list[float] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set() and len(latencies) < 500:
            latencies.append(_healthy(clients["anon"]))

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        for _ in range(2):
            r = clients["write"].post("/branches/main/mutations", json={"operations": attack})
            assert r.status_code == 422, r.text
            r = clients["write"].post("/branches/main/mutations", json={"operations": big})
            assert r.status_code == 200, r.text
    finally:
        done.set()
        poller.join(30)
    assert latencies
    print(
        f"/health during writes: {len(latencies)} answers, max {max(latencies) * 1000:.0f} ms"
        f" (idle: max {idle * 1000:.0f} ms of 30)"
    )
    # The goal is 100 ms on a quiet machine; the bound is relative to the same server idle,
    # so a loaded CI machine does not fail it and a write holding the GIL for seconds does.
    assert max(latencies) < idle + 0.5, sorted(latencies)[-5:]


@pytest.mark.parametrize(
    "query",
    [
        f"RETURN {BIG} AS x",
        f"MATCH (p:P) RETURN p.name LIMIT {BIG}",
        f"MATCH (p:P) RETURN p.name SKIP {BIG}",
        f"MATCH (a:P)-[*1..{BIG}]->(b:P) RETURN b.name",
        f"MATCH (a:P)-[*{BIG}]->(b:P) RETURN b.name",
    ],
)
def test_huge_integers_in_cypher_are_400(clients: dict[str, httpx.Client], query: str) -> None:
    r = clients["read"].post("/branches/main/query", json={"query": query})
    assert "too large" in _error(r, 400, "CypherSyntaxError")
    assert _healthy(clients["anon"]) < 1.0


@pytest.mark.parametrize(
    "query",
    [
        "RETURN " + "+".join(["1"] * 3000) + " AS x",
        "RETURN " + "[" * 2000 + "1" + "]" * 2000 + " AS x",
        "RETURN " + "NOT " * 3000 + "true AS x",
        "MATCH (p:P) WHERE p.name =~ 'a{4294967296}' RETURN p.name",
        "MATCH (p:P) WHERE p.name =~ '" + "(" * 2000 + "a" + ")" * 2000 + "' RETURN p.name",
    ],
)
def test_deep_or_unbounded_cypher_is_400(clients: dict[str, httpx.Client], query: str) -> None:
    t0 = time.perf_counter()
    r = clients["read"].post("/branches/main/query", json={"query": query})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"].startswith(("Cypher", "Query")), r.text
    assert time.perf_counter() - t0 < 5.0
    assert _healthy(clients["anon"]) < 1.0


NODE = (
    'node Doc {{ name: String @key\n  body: String? @check("(a+)+")\n  v: {} }}\n'
    "node P {{ name: String @key }}\nedge K: P -> P{}"
)


@pytest.mark.parametrize(
    ("prop", "edge"),
    [
        ("Vector(2147483648)?", ""),
        (f"Vector({BIG})?", ""),
        (f"I64? @range(0..{BIG})", ""),
        (f"I64? @default({BIG})", ""),
        ("F32? @default(1e300)", ""),
        ("String?", f" @card(0..{BIG})"),
        ("[" * 500 + "String" + "]" * 500 + "?", ""),
        ('String? @check("' + "(" * 2000 + "a" + ")" * 2000 + '")', ""),
        ('String? @check("a{4294967296}")', ""),
        ('String? @check("(a)\\1")', ""),
    ],
)
@pytest.mark.parametrize("dry_run", [True, False])
def test_schema_attacks_are_400(
    clients: dict[str, httpx.Client], prop: str, edge: str, dry_run: bool
) -> None:
    before = clients["read"].get("/branches/main/schema").json()
    r = clients["admin"].post(
        "/branches/main/schema", json={"schema": NODE.format(prop, edge), "dry_run": dry_run}
    )
    assert _error(r, 400, "SchemaError")
    assert len(r.text) < 1000  # a 5,000-digit number is not echoed whole
    assert clients["read"].get("/branches/main/schema").json() == before
    assert _healthy(clients["anon"]) < 1.0


def test_vector_dimension_at_the_cap_applies(clients: dict[str, httpx.Client]) -> None:
    r = clients["admin"].post(
        "/branches/main/schema", json={"schema": NODE.format("Vector(65536)?", ""), "dry_run": True}
    )
    assert r.status_code == 200, r.text
