"""Concurrent clients: each creates a branch, writes to it, merges it into one target."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.server.harness import WRITE_TOKEN, Server, head, unique

WORKERS = 8
PEOPLE_EACH = 20


def _all_ids(client: httpx.Client, branch: str, table: str) -> list[str]:
    ids, cursor = [], None
    while True:
        params: dict = {"limit": 37, "columns": "id"}
        if cursor:
            params["cursor"] = cursor
        r = client.get(f"/branches/{branch}/tables/{table}", params=params)
        assert r.status_code == 200, r.text
        ids += [row["id"] for row in r.json()["rows"]]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return ids


def test_parallel_branches_merge_into_one_target(
    server: Server, writer: httpx.Client, reader: httpx.Client
) -> None:
    # `main` is protected on this server; the workers land in a fresh, unprotected target.
    target = unique("trunk")
    assert writer.post("/branches", json={"name": target}).status_code == 201
    start = threading.Barrier(WORKERS)

    def work(n: int) -> dict:
        with server.client(WRITE_TOKEN) as c:
            name = f"{target}/w{n}"
            start.wait(timeout=60)  # all workers hit the server at once
            r = c.post("/branches", json={"name": name, "from": target})
            assert r.status_code == 201, r.text
            people = [{"name": f"w{n}-p{i}", "age": i} for i in range(PEOPLE_EACH)]
            knows = [
                {"id": f"w{n}-k{i}", "src": f"w{n}-p{i}", "dst": f"w{n}-p{i + 1}"}
                for i in range(PEOPLE_EACH - 1)
            ]
            r = c.post(
                f"/branches/{name}/mutations",
                json={
                    "message": f"w{n}",
                    "operations": [
                        {"op": "insert", "table": "Person", "rows": people},
                        {"op": "insert", "table": "Knows", "rows": knows},
                        {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 40}]},
                    ],
                },
            )
            assert r.status_code == 200, r.text
            r = c.post("/merge", json={"source": name, "into": target})
            assert r.status_code == 200, r.text
            return r.json()

    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(work, range(WORKERS)))

    outcomes = sorted(r["outcome"] for r in results)
    assert set(outcomes) <= {"fast_forward", "merged"}
    people = _all_ids(reader, target, "Person")
    assert len(people) == len(set(people)), "a row came twice"
    expected = {f"w{n}-p{i}" for n in range(WORKERS) for i in range(PEOPLE_EACH)}
    assert expected | {"Alice", "Bob", "Carol"} == set(people), "a write was lost"
    knows = set(_all_ids(reader, target, "Knows"))
    assert {f"w{n}-k{i}" for n in range(WORKERS) for i in range(PEOPLE_EACH - 1)} <= knows
    # Every merge is in the target's history: one commit per merge (fast-forwards add the
    # worker's commit itself).
    log = reader.get(f"/branches/{target}/log").json()["commits"]
    messages = [c["message"] for c in log]
    assert all(
        f"w{n}" in messages or any(m.startswith(f"merge {target}/w{n} ") for m in messages)
        for n in range(WORKERS)
    )
    assert head(reader, target) == log[0]["id"]
