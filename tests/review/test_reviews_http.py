"""Merge requests over HTTP: two tokens (author and approver), the target's rules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.harness import (
    ADMIN_TOKEN,
    READ_TOKEN,
    WRITE_TOKEN,
    Server,
    mutate,
    seed,
    write_config,
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("reviews")
    seed(d / "graph")
    config = write_config(d / "server.toml", protected=[])
    config.write_text(
        config.read_text() + '\n[branches."main"]\nrequired_approvals = 1\n'
        "merge_only_via_request = true\n"
    )
    server = Server(d / "graph", d, ["--config", str(config)]).start()
    yield server
    server.stop()


def test_lifecycle_two_tokens_and_rules(srv: Server) -> None:
    with (
        srv.client(WRITE_TOKEN) as author,
        srv.client(ADMIN_TOKEN) as approver,
        srv.client(READ_TOKEN) as reader,
    ):
        assert author.post("/branches", json={"name": "dev"}).status_code in (200, 201)
        mutate(
            author, "dev", {"op": "update", "table": "Person", "rows": [{"name": "Bob", "age": 41}]}
        )
        r = author.post("/merge", json={"source": "dev", "into": "main"})
        assert r.status_code == 403 and "merge_only_via_request" in r.text
        assert (
            reader.post("/merge-requests", json={"source": "dev", "title": "t"}).status_code == 403
        )  # open needs the write scope
        r = author.post("/merge-requests", json={"source": "dev", "title": "Bob is 41"})
        assert r.status_code == 201, r.text
        rid = r.json()["id"]
        assert author.post(f"/merge-requests/{rid}/approve").status_code == 403  # own
        r = author.post(f"/merge-requests/{rid}/merge")
        assert r.status_code == 403 and "required_approvals" in r.text
        assert (
            approver.post(f"/merge-requests/{rid}/comment", json={"text": "ok"}).status_code == 200
        )
        assert approver.post(f"/merge-requests/{rid}/approve").status_code == 200
        shown = reader.get(f"/merge-requests/{rid}").json()
        assert shown["preview"]["mergeable"] and len(shown["preview"]["approvals"]) == 1
        assert reader.get("/merge-requests/999").status_code == 404
        r = author.post(f"/merge-requests/{rid}/merge")
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "merged" and r.json()["merge_commit"]
        assert author.post(f"/merge-requests/{rid}/merge").status_code == 409
        listed = reader.get("/merge-requests", params={"state": "merged"}).json()
        assert [m["id"] for m in listed["merge_requests"]] == [rid]
        kinds = [e["kind"] for e in listed["merge_requests"][0]["events"]]
        assert kinds == ["opened", "commented", "approved", "merged"]
        by = {e["kind"]: e["by"] for e in listed["merge_requests"][0]["events"]}
        assert by["opened"] != by["approved"]
