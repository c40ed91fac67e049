"""Data checks over HTTP: the routes, the server's query limits, the `require_checks`
rule on merge requests and direct merges, and `merge_only_via_request` refusing
revert, cherry-pick and reset."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import graphlake as gl
from tests.review.test_data_checks import DUP_CYPHER, DUP_SQL, PEOPLE
from tests.server.harness import ADMIN_TOKEN, READ_TOKEN, WRITE_TOKEN, Server, write_config

SLOW = "SELECT sum(hash(i)) AS s FROM range(100000000000) t(i) HAVING sum(hash(i)) <> 0"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("checks")
    g = gl.Graph.init(d / "graph", PEOPLE)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "Ann", "email": "ann@x"}])
    g.set_data_checks({"dup_email": DUP_CYPHER, "dup_email_sql": DUP_SQL})
    for b in ("a", "b", "slow"):
        g.create_branch(b)
    with g.write("a") as w:
        w.insert("Person", [{"name": "Cid", "email": "same@x"}])
    with g.write("b") as w:
        w.insert("Person", [{"name": "Dee", "email": "same@x"}])
    g.merge("a")  # local access is administrative: no rules
    config = write_config(
        d / "server.toml", protected=[], limits={"sql_timeout_s": 1, "max_concurrent_reads": 1}
    )
    config.write_text(
        config.read_text() + '\n[branches."main"]\nrequired_approvals = 1\n'
        "require_checks = true\nmerge_only_via_request = true\n"
    )
    server = Server(d / "graph", d, ["--config", str(config)]).start()
    yield server
    server.stop()


def test_routes_and_limits(srv: Server) -> None:
    with srv.client(WRITE_TOKEN) as writer, srv.client(READ_TOKEN) as reader:
        got = reader.get("/branches/main/data-checks").json()
        assert sorted(got["checks"]) == ["dup_email", "dup_email_sql"]
        assert got["checks"]["dup_email_sql"] == {"language": "sql", "query": DUP_SQL}
        ran = reader.post("/branches/main/data-checks/run").json()
        assert ran["passed"] and [r["name"] for r in ran["results"]] == [
            "dup_email",
            "dup_email_sql",
        ]
        head = reader.get("/branches/slow/data-checks").json()["commit"]
        for bad in ({"c": "DELETE FROM Person"}, {"no good": "SELECT 1"}, {"c": "MATCH (("}):
            r = writer.put("/branches/slow/data-checks", json={"checks": bad})
            assert r.status_code == 400 and r.json()["error"]["type"] == "DataCheckError", r.text
        assert reader.get("/branches/slow/data-checks").json()["commit"] == head
        assert (
            reader.put("/branches/slow/data-checks", json={"checks": {}}).status_code == 403
        )  # the write scope
        r = writer.put("/branches/slow/data-checks", json={"checks": {"slow": SLOW}})
        assert r.status_code == 200 and r.json()["commit"] != head
        # The server's sql_timeout_s bounds a check: it fails with the limit's error.
        [slow] = reader.post("/branches/slow/data-checks/run").json()["results"]
        assert not slow["passed"] and "sql_timeout_s" in slow["error"]


def test_require_checks_on_requests_and_direct_merges(srv: Server) -> None:
    with srv.client(WRITE_TOKEN) as author, srv.client(ADMIN_TOKEN) as approver:
        before = author.get("/branches/main/data-checks").json()["commit"]
        dry = author.post("/merge", json={"source": "b", "dry_run": True})
        assert dry.status_code == 200, dry.text
        assert [c["passed"] for c in dry.json()["data_checks"]] == [False, False]
        r = author.post("/merge-requests", json={"source": "b", "title": "Dee"})
        rid = r.json()["id"]
        assert approver.post(f"/merge-requests/{rid}/approve").status_code == 200
        preview = author.get(f"/merge-requests/{rid}").json()["preview"]
        assert not preview["mergeable"]
        assert [b for b in preview["blocked_by"] if b.startswith("require_checks")]
        [dup, _] = preview["data_checks"]
        assert dup["rows"] == [{"first": "Cid", "second": "Dee", "email": "same@x"}]
        r = author.post(f"/merge-requests/{rid}/merge")
        assert r.status_code == 409, r.text
        assert r.json()["error"]["type"] == "DataCheckFailedError"
        assert "require_checks" in r.json()["error"]["message"]
        assert [c["passed"] for c in r.json()["data_checks"]] == [False, False]
        assert author.get("/branches/main/data-checks").json()["commit"] == before
        assert author.get(f"/merge-requests/{rid}").json()["state"] == "open"


def test_merge_only_via_request_refuses_revert_pick_reset(srv: Server) -> None:
    with srv.client(WRITE_TOKEN) as w, srv.client(ADMIN_TOKEN) as admin:
        head = w.get("/branches/main/data-checks").json()["commit"]
        for path, body in (
            ("revert", {"rev": "main"}),
            ("cherry-pick", {"rev": "b"}),
            ("reset", {"rev": "main~1"}),
        ):
            for client in (w, admin):
                r = client.post(f"/branches/main/{path}", json=body)
                assert r.status_code == 403, (path, r.text)
                assert "merge_only_via_request" in r.json()["error"]["message"]
        r = w.post("/branches/main/revert", json={"rev": "main", "dry_run": True})
        assert r.status_code == 200, r.text  # a dry run changes nothing
        assert w.get("/branches/main/data-checks").json()["commit"] == head
