"""Authors over HTTP (in process, no server subprocess): a token's name is the author of
the commits its requests make, an unnamed token acts as `token-` and 6 hex characters of
its hash, and the log shows the author."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import graphlake as gl
from graphlake.server.app import create_app
from graphlake.server.config import ConfigError, Scope, ServerConfig, load_config

SCHEMA = "node Person { name: String @key\n age: I32? }\n"
NAMED, UNNAMED, ADMIN = "named-token-1234567890", "plain-token-1234567890", "admin-tok-123456789"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("hops") / "g"
    g = gl.Graph.init(root, SCHEMA, author="setup")
    g.create_branch("dev")
    config = ServerConfig(
        tokens={NAMED: Scope.write, UNNAMED: Scope.write, ADMIN: Scope.admin},
        token_names={NAMED: "ingest-bot", ADMIN: "root admin"},
        protected_branches=frozenset({"main"}),
    )
    with TestClient(create_app(g, config), base_url="http://127.0.0.1") as c:
        yield c


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _insert(client: TestClient, token: str, branch: str, name: str) -> str:
    r = client.post(
        f"/branches/{branch}/mutations",
        headers=_auth(token),
        json={"operations": [{"op": "insert", "table": "Person", "rows": [{"name": name}]}]},
    )
    assert r.status_code == 200, r.text
    return r.json()["commit"]


def test_the_token_name_is_the_author(client: TestClient) -> None:
    _insert(client, NAMED, "dev", "a")
    _insert(client, UNNAMED, "dev", "b")
    r = client.get("/branches/dev/log", headers=_auth(NAMED))
    authors = [c["author"] for c in r.json()["commits"]]
    unnamed = "token-" + hashlib.sha256(UNNAMED.encode()).hexdigest()[:6]
    assert authors == [unnamed, "ingest-bot", "setup"]


def test_env_tokens_may_carry_a_name(tmp_path: Path) -> None:
    config = load_config(env={"GRAPHLAKE_TOKENS": "bot:secret-1:write,secret-2:read"})
    assert config.tokens == {"secret-1": Scope.write, "secret-2": Scope.read}
    assert config.token_names == {"secret-1": "bot"}
    with pytest.raises(ConfigError):
        load_config(env={"GRAPHLAKE_TOKENS": "b<a>d:secret-1:write"})
    path = tmp_path / "s.toml"
    path.write_text(
        '[[tokens]]\ntoken = "t-1234567890"\nscope = "read"\nname = "ro"\nbranches = ["dev/*"]\n'
    )
    config = load_config(path, env={})
    assert config.token_names == {"t-1234567890": "ro"}
    assert config.token_branches == {"t-1234567890": ("dev/*",)}


def test_tags_over_http(client: TestClient) -> None:
    r = client.post(
        "/tags", headers=_auth(NAMED), json={"name": "v1", "rev": "dev", "message": "release"}
    )
    assert r.status_code == 201, r.text
    assert r.json()["author"] == "ingest-bot"
    head = client.get("/branches/dev/log?limit=1", headers=_auth(NAMED)).json()
    assert r.json()["commit"] == head["commits"][0]["id"]
    again = client.post("/tags", headers=_auth(NAMED), json={"name": "v1"})
    assert again.status_code == 409 and again.json()["error"]["type"] == "TagExistsError"
    clash = client.post("/tags", headers=_auth(NAMED), json={"name": "dev"})
    assert clash.status_code == 409
    bad = client.post("/tags", headers=_auth(NAMED), json={"name": "a b"})
    assert bad.status_code == 400
    unknown = client.post("/tags", headers=_auth(NAMED), json={"name": "v2", "rev": "nope"})
    assert unknown.status_code == 404
    listed = client.get("/tags", headers=_auth(UNNAMED)).json()["tags"]
    assert [t["name"] for t in listed] == ["v1"]
    assert client.get("/branches/v1/log", headers=_auth(NAMED)).status_code == 200
    assert client.delete("/tags/v1", headers=_auth(NAMED)).status_code == 403
    assert client.delete("/tags/v1", headers=_auth(ADMIN)).status_code == 204
    assert client.delete("/tags/v1", headers=_auth(ADMIN)).status_code == 404
    assert client.get("/tags", headers=_auth(NAMED)).json()["tags"] == []


def test_revert_and_cherry_pick_over_http(client: TestClient) -> None:
    client.post("/branches", headers=_auth(NAMED), json={"name": "rp", "from": "dev"})
    bad = _insert(client, NAMED, "rp", "mistake")
    r = client.post("/branches/rp/revert", headers=_auth(NAMED), json={"rev": bad, "dry_run": True})
    assert r.status_code == 200 and r.json()["outcome"] == "merged" and not r.json()["commit"]
    r = client.post("/branches/rp/revert", headers=_auth(NAMED), json={"rev": bad})
    assert r.status_code == 200, r.text
    log = client.get("/branches/rp/log?limit=1", headers=_auth(NAMED)).json()["commits"]
    assert log[0]["id"] == r.json()["commit"] and log[0]["author"] == "ingest-bot"
    rows = client.get("/branches/rp/tables/Person", headers=_auth(NAMED)).json()
    assert "mistake" not in str(rows)
    picked = client.post("/branches/main/cherry-pick", headers=_auth(NAMED), json={"rev": bad})
    assert picked.status_code == 200 and picked.json()["outcome"] == "merged"
    again = client.post("/branches/main/cherry-pick", headers=_auth(NAMED), json={"rev": bad})
    assert again.json()["outcome"] == "already_up_to_date"
    root = client.get("/branches/main/log", headers=_auth(NAMED)).json()["commits"][-1]["id"]
    refused = client.post("/branches/rp/revert", headers=_auth(NAMED), json={"rev": root})
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "ApplyCommitError"
    conflict_base = _insert(client, NAMED, "rp", "c")
    client.post(
        "/branches/rp/mutations",
        headers=_auth(NAMED),
        json={
            "operations": [{"op": "update", "table": "Person", "rows": [{"name": "c", "age": 5}]}]
        },
    )
    r = client.post("/branches/rp/revert", headers=_auth(NAMED), json={"rev": conflict_base})
    assert r.status_code == 409 and r.json()["merge_conflicts"]


def test_reset_and_reflog_over_http(client: TestClient) -> None:
    client.post("/branches", headers=_auth(NAMED), json={"name": "rs", "from": "dev"})
    start = client.get("/branches/rs/log?limit=1", headers=_auth(NAMED)).json()
    _insert(client, UNNAMED, "rs", "x")
    r = client.post(
        "/branches/rs/reset", headers=_auth(NAMED), json={"rev": start["commits"][0]["id"]}
    )
    assert r.status_code == 200 and r.json()["commit"] == start["commits"][0]["id"]
    entries = client.get("/branches/rs/reflog", headers=_auth(NAMED)).json()["entries"]
    assert [(e["action"], e["author"]) for e in entries][:2] == [
        ("reset", "ingest-bot"),
        ("write", "token-" + hashlib.sha256(UNNAMED.encode()).hexdigest()[:6]),
    ]
    protected = client.post("/branches/main/reset", headers=_auth(NAMED), json={"rev": "dev"})
    assert protected.status_code == 403 and "admin" in protected.json()["error"]["message"]
    unknown = client.post("/branches/nope/reset", headers=_auth(NAMED), json={"rev": "dev"})
    assert unknown.status_code == 404
    assert client.get("/branches/never/reflog", headers=_auth(NAMED)).status_code == 404


def test_branch_patterns_limit_what_a_token_changes(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    g.create_branch("dev/a")
    g.create_branch("other")
    limited = "limited-token-1234567890"
    config = ServerConfig(
        tokens={limited: Scope.admin},
        token_names={limited: "bot"},
        token_branches={limited: ("dev/*", "v*")},
    )
    with TestClient(create_app(g, config), base_url="http://127.0.0.1") as c:
        assert _insert(c, limited, "dev/a", "ok")
        head = g.head("other").id
        refused = [
            c.post(
                "/branches/other/mutations",
                headers=_auth(limited),
                json={"operations": [{"op": "insert", "table": "Person", "rows": [{"name": "x"}]}]},
            ),
            c.post("/merge", headers=_auth(limited), json={"source": "dev/a", "into": "other"}),
            c.post("/branches/other/reset", headers=_auth(limited), json={"rev": "dev/a"}),
            c.post("/branches", headers=_auth(limited), json={"name": "feature"}),
            c.delete("/branches/other", headers=_auth(limited)),
            c.post("/tags", headers=_auth(limited), json={"name": "release"}),
            c.post(
                "/branches/other/schema",
                headers=_auth(limited),
                json={"schema": SCHEMA + "node X { name: String @key }\n"},
            ),
        ]
        for r in refused:
            assert r.status_code == 403, r.text
            assert r.json()["error"]["type"] == "BranchPermissionError"
            assert "'dev/*'" in r.json()["error"]["message"]
        assert g.head("other").id == head and "feature" not in g.branches()
        assert g.tags() == {}
        assert c.post("/tags", headers=_auth(limited), json={"name": "v1"}).status_code == 201
        assert (
            c.post("/branches", headers=_auth(limited), json={"name": "dev/b"}).status_code == 201
        )
        assert c.get("/branches/other/log", headers=_auth(limited)).status_code == 200


def test_the_web_ui_shows_authors_tags_and_the_token_name(client: TestClient) -> None:
    from tests.ui.harness import csrf_of

    client.post("/tags", headers=_auth(NAMED), json={"name": "ui-tag", "rev": "dev"})
    form = client.get("/ui/login")
    r = client.post(
        "/ui/login", data={"csrf": csrf_of(form), "token": NAMED, "next": "/ui/branches"}
    )
    assert r.status_code == 200, r.text
    page = client.get("/ui/history?ref=dev")
    assert page.status_code == 200
    assert '<span class="who">ingest-bot</span>' in page.text  # the header
    assert '<span class="author">ingest-bot</span>' in page.text
    assert "tag: ui-tag" in page.text
    client.cookies.clear()
