"""`POST /branches/{b}/algo/{name}`: graph algorithms over HTTP in the query workers, read
scope, typed 4xx for bad input, paging by offset/limit."""

from __future__ import annotations

import httpx

from tests.server.harness import head, mutate


def test_algorithms_answer_rows_by_id(reader: httpx.Client) -> None:
    r = reader.post("/branches/main/algo/pagerank", json={"edge_type": "Knows"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["commit"] == head(reader, "main")
    assert body["columns"] == ["id", "rank"] and body["total"] == 3
    ranks = dict(body["rows"])
    assert list(ranks) == ["Alice", "Bob", "Carol"]
    assert ranks["Bob"] > ranks["Alice"] and abs(sum(ranks.values()) - 1) < 1e-9
    r = reader.post(
        "/branches/main/algo/shortest_paths",
        json={"edge_type": "Knows", "params": {"source": "Alice"}, "offset": 1, "limit": 5},
    )
    assert r.status_code == 200, r.text
    assert r.json()["total"] == 2 and r.json()["rows"] == [["Bob", 1.0]]
    r = reader.post("/branches/main/algo/wcc", json={"edge_type": "WorksAt"})  # bipartite
    assert r.json()["columns"] == ["type", "id", "component"], r.text
    assert r.json()["rows"][0] == ["Company", "Acme", 0]


def test_algo_errors_are_typed_4xx(
    reader: httpx.Client, writer: httpx.Client, anon: httpx.Client
) -> None:
    cases = [
        ("pagerank", {"edge_type": "Knows", "params": {"damping": 1}}, 400, "AlgorithmError"),
        ("pagerank", {"edge_type": "Nope"}, 404, "UnknownTableError"),
        (
            "shortest_paths",
            {"edge_type": "Knows", "params": {"source": "Zed"}},
            422,
            "KeyNotFoundError",
        ),
        (
            "shortest_paths",
            {"edge_type": "Knows", "params": {"source": "Alice", "weight": "x"}},
            422,
            "UnknownPropertyError",
        ),
    ]
    for name, body, status, kind in cases:
        r = reader.post(f"/branches/main/algo/{name}", json=body)
        assert r.status_code == status, r.text
        assert r.json()["error"]["type"] == kind, r.text
    # A name no algorithm has: read scope does not reach it (the body gate knows the
    # names); a write token gets the error naming the known ones.
    r = writer.post("/branches/main/algo/closeness", json={"edge_type": "Knows"})
    assert r.status_code == 400 and "known: pagerank" in r.json()["error"]["message"], r.text
    assert (
        reader.post("/branches/main/algo/closeness", json={"edge_type": "Knows"}).status_code == 403
    )
    assert anon.post("/branches/main/algo/wcc", json={"edge_type": "Knows"}).status_code == 401
    assert reader.post("/branches/nope/algo/wcc", json={"edge_type": "Knows"}).status_code == 404
    assert reader.post("/branches/main/algo/wcc", json={"edge_type": ""}).status_code == 422
    big = {"edge_type": "Knows", "params": {f"p{i}": 1 for i in range(9)}}
    assert reader.post("/branches/main/algo/wcc", json=big).status_code == 422


def test_next_page_reads_the_kept_answer(writer: httpx.Client, branch: str) -> None:
    """The first request runs the algorithm and keeps its answer; the next page of the
    same commit, algorithm, edge type and parameters is a slice of it (`cached`, no run);
    other parameters, or a write that moves the head, run again."""
    url = f"/branches/{branch}/algo/pagerank"
    body = {"edge_type": "Knows", "params": {"damping": 0.61}, "limit": 2}
    first = writer.post(url, json=body)
    assert first.status_code == 200, first.text
    assert first.json()["cached"] is False and first.json()["total"] == 3
    second = writer.post(url, json={**body, "offset": 2})
    assert second.status_code == 200, second.text
    assert second.json()["cached"] is True
    assert second.json()["commit"] == first.json()["commit"]
    assert len(first.json()["rows"]) == 2 and len(second.json()["rows"]) == 1
    again = writer.post(url, json={**body, "limit": 3}).json()
    assert again["cached"] is True and again["rows"] == first.json()["rows"] + second.json()["rows"]
    other = writer.post(url, json={**body, "params": {"damping": 0.62}})
    assert other.json()["cached"] is False
    mutate(writer, branch, {"op": "insert", "table": "Person", "rows": [{"name": "Dan"}]})
    moved = writer.post(url, json=body).json()
    assert moved["cached"] is False and moved["total"] == 4
    assert moved["commit"] != first.json()["commit"]


def test_answer_cache_is_bounded_by_bytes() -> None:
    import pyarrow as pa

    from graphlake.server.algo_cache import AnswerCache, answer_key

    def table(n: int) -> pa.Table:
        return pa.table({"rank": pa.array([0.5] * n, pa.float64())})  # 8 bytes a row

    cache = AnswerCache(budget_bytes=8 * 100)
    keys = [answer_key("c", "pagerank", "Knows", {"damping": d}) for d in (0.1, 0.2, 0.3)]
    assert cache.put(keys[0], table(40)) and cache.put(keys[1], table(40))
    assert cache.get(keys[0]) is not None  # now the most recently used
    assert cache.put(keys[2], table(40))  # 120 rows > 100: the least recent (keys[1]) goes
    assert cache.get(keys[1]) is None and cache.get(keys[0]) is not None
    assert cache.nbytes == 8 * 80
    assert not cache.put(answer_key("c", "wcc", "Knows", {}), table(101))  # larger than all
    assert cache.nbytes == 8 * 80
    assert answer_key("c", "a", "E", {"x": 1, "y": 2}) == answer_key(
        "c", "a", "E", {"y": 2, "x": 1}
    )


def test_cypher_call_runs_in_the_query_worker(reader: httpx.Client) -> None:
    r = reader.post(
        "/branches/main/query",
        json={
            "query": "CALL pagerank('Knows', {damping: $d}) YIELD node, rank "
            "RETURN node.name AS name, rank ORDER BY rank DESC, name",
            "params": {"d": 0.85},
        },
    )
    assert r.status_code == 200, r.text
    rows = r.json()["rows"]
    assert [row[0] for row in rows] == ["Bob", "Alice", "Carol"]
    r = reader.post("/branches/main/query", json={"query": "CALL pagerank('Knows', {damping: 2})"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "CypherProcedureError", r.text
    assert "damping must be between 0 and 1" in r.json()["error"]["message"]
