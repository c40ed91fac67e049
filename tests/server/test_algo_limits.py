"""Graph algorithms under the server's hard limits, against a real `graphlake serve`.

One rule for both doors, `POST /algo` and Cypher's `CALL`: a run's memory estimate is
held to `query_memory_mb` (not DuckDB's `sql_memory_limit_mb`), refused with a typed 413
before it starts; its threads to `algo_threads` (a larger `threads` is 400, Louvain's
default there is its repeatable one-thread run). The server answers after every refusal.
The big version of these attacks, with peak RSS, is bench/algo_attack.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.harness import READ_TOKEN, Server, write_config

LIMITS = {
    "max_concurrent_reads": 2,
    "query_memory_mb": 1,  # an algorithm run's estimate: Knows's is ~1.6 MB, Likes's ~0.4
    "sql_memory_limit_mb": 512,  # DuckDB's: not an algorithm's limit
    "adjacency_memory_mb": 256,  # the worker's headroom: 1 + 256 MB above its ready size
    "algo_threads": 1,
    "sql_timeout_s": 20,
    "sql_max_result_bytes": 32768,  # a 2,000-node answer (36 KB) is larger
}
SCHEMA = """
node Person { name: String @key }
edge Knows: Person -> Person { w: F64 }
edge Likes: Person -> Person
"""
NODES, EDGES = 2000, 10_000


def build(root: Path) -> None:
    import numpy as np

    import graphlake as gl

    rng = np.random.default_rng(5)
    g = gl.Graph.init(root, SCHEMA)
    names = [f"p{i:05d}" for i in range(NODES)]
    src, dst = rng.integers(0, NODES, EDGES), rng.integers(0, NODES, EDGES)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": n} for n in names])
        w.insert(
            "Knows",
            [
                {"id": f"k{j}", "src": names[a], "dst": names[b], "w": float(j % 7)}
                for j, (a, b) in enumerate(zip(src, dst, strict=True))
            ],
        )
        # two triangles and a pair: three communities whatever the visiting order
        likes = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (6, 7), (7, 6)]
        w.insert(
            "Likes",
            [{"id": f"l{j}", "src": names[a], "dst": names[b]} for j, (a, b) in enumerate(likes)],
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("algo-limits")
    build(d / "graph")
    config = write_config(d / "server.toml", limits=LIMITS)
    srv = Server(d / "graph", d, ["--config", str(config)]).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def reader(server: Server) -> Iterator[httpx.Client]:
    with server.client(READ_TOKEN, timeout=60) as c:
        yield c


def algo(c: httpx.Client, name: str, edge_type: str, **params: object) -> httpx.Response:
    return c.post(f"/branches/main/algo/{name}", json={"edge_type": edge_type, "params": params})


def cypher(c: httpx.Client, text: str) -> httpx.Response:
    return c.post("/branches/main/query", json={"query": text})


def alive(c: httpx.Client) -> None:
    assert c.get("/health").status_code == 200
    r = c.post("/branches/main/sql", json={"query": "SELECT count(*) AS n FROM Knows"})
    assert r.status_code == 200 and r.json()["rows"] == [[EDGES]], r.text


def test_both_doors_hold_a_run_to_query_memory_mb(reader: httpx.Client) -> None:
    """The estimate of pagerank on Knows (10k edges) passes 1 MB: 413 at both doors, naming
    query_memory_mb, though DuckDB's limit (512 MB) would have let the CALL run before."""
    for r in (
        algo(reader, "pagerank", "Knows"),
        cypher(reader, "CALL pagerank('Knows') YIELD node, rank RETURN count(*) AS n"),
        algo(reader, "louvain", "Knows"),
        cypher(reader, "CALL sssp('Knows', {source: 'p00001', weight: 'w'})"),
    ):
        assert r.status_code == 413, r.text
        error = r.json()["error"]
        assert error["type"] == "AlgorithmMemoryError", r.text
        assert "more than the limit of 1 MB" in error["message"]
        assert "query_memory_mb" in error["message"]
    alive(reader)
    # The small edge type's estimate fits: both doors answer, with the same ranks.
    r = reader.post(
        "/branches/main/algo/pagerank",
        json={"edge_type": "Likes", "params": {"damping": 0.8}, "limit": 1000},
    )
    assert r.status_code == 200, r.text
    by_algo = dict(r.json()["rows"])
    r = cypher(
        reader,
        "CALL pagerank('Likes', {damping: 0.8}) YIELD node, rank "
        "RETURN node.name AS n, rank ORDER BY n LIMIT 1000",
    )
    assert r.status_code == 200, r.text
    assert dict(r.json()["rows"]) == by_algo and len(by_algo) == 1000


def test_threads_are_capped_at_algo_threads(reader: httpx.Client, server: Server) -> None:
    for r in (
        algo(reader, "louvain", "Likes", threads=2),
        algo(reader, "louvain", "Likes", threads=1024),
        cypher(reader, "CALL louvain('Likes', {threads: 2}) YIELD node RETURN count(*)"),
    ):
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "AlgorithmError", r.text
        assert "at most 1" in r.json()["error"]["message"]
        assert "algo_threads" in r.json()["error"]["message"]
    # Louvain's default in the server is one thread: the same answer as threads=1.
    default = algo(reader, "louvain", "Likes")
    one = algo(reader, "louvain", "Likes", threads=1)
    assert default.status_code == one.status_code == 200, default.text
    assert default.json()["rows"] == one.json()["rows"]
    communities = {}
    for node, label in default.json()["rows"]:
        communities.setdefault(label, set()).add(node)
    assert {"p00000", "p00001", "p00002"} in communities.values()
    # Each query worker runs OpenMP and BLAS code on algo_threads threads by default.
    assert server.proc is not None
    workers = _children(server.proc.pid)
    assert workers
    for pid in workers:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        assert b"OMP_NUM_THREADS=1" in environ and b"OPENBLAS_NUM_THREADS=1" in environ
    alive(reader)


def test_louvain_in_the_server_is_repeatable(reader: httpx.Client) -> None:
    """Cypher's CALL keeps no answer: each request runs Louvain again, and the runs agree
    (one thread; on more, NetworKit's PLM may answer differently run to run)."""
    text = (
        "CALL louvain('Likes') YIELD node, community "
        "RETURN node.name AS n, community ORDER BY n LIMIT 1000"
    )
    first = cypher(reader, text)
    assert first.status_code == 200, first.text
    for _ in range(2):
        assert cypher(reader, text).json()["rows"] == first.json()["rows"]


def test_an_answer_larger_than_a_result_does_not_cross_whole(reader: httpx.Client) -> None:
    """Only an answer within sql_max_result_bytes crosses from the worker whole to be kept
    (the server takes in no more per request): a larger one's pages each run again, and
    agree (Louvain on its one thread)."""
    url = "/branches/main/algo/louvain"
    pages = [
        reader.post(url, json={"edge_type": "Likes", "offset": o, "limit": 1000})
        for o in (0, 1000, 0)
    ]
    assert [p.status_code for p in pages] == [200] * 3, pages[0].text
    assert [p.json()["cached"] for p in pages] == [False] * 3  # 2,000 rows: 36 KB
    assert pages[0].json()["rows"] == pages[2].json()["rows"]
    assert pages[0].json()["total"] == NODES and len(pages[1].json()["rows"]) == 1000
    small = {"edge_type": "Likes", "params": {"source": "p00000"}}
    url = "/branches/main/algo/shortest_paths"
    assert reader.post(url, json=small).json()["cached"] is False  # 3 rows: kept
    again = reader.post(url, json={**small, "offset": 1})
    assert again.json()["cached"] is True and again.json()["total"] == 3, again.text


def test_limits_cannot_be_passed_as_parameters(reader: httpx.Client) -> None:
    """A parameter named like `run`'s own limits is an unknown parameter (400), never a
    limit and never a server error."""
    for params in ({"max_memory_mb": 10**6}, {"max_threads": 64}, {"max_iterations": 10**12}):
        r = reader.post(
            "/branches/main/algo/pagerank", json={"edge_type": "Likes", "params": params}
        )
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "AlgorithmError"
        assert re.search(r"has no parameter '\w+'", r.json()["error"]["message"]), r.text
    alive(reader)


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return out
