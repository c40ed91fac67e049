"""`POST /branches/{b}/algo/{name}`: graph algorithms over HTTP in the query workers, read
scope, typed 4xx for bad input, paging by offset/limit."""

from __future__ import annotations

import httpx

from tests.server.harness import head


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
