"""Bearer tokens and scopes, protected branches, start-up refusal, and secrets in logs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.server.harness import (
    ADMIN_TOKEN,
    READ_TOKEN,
    TOKENS,
    WRITE_TOKEN,
    Server,
    head,
    mutate,
    seed,
    serve_command,
    unique,
)

CALLERS = {"none": None, "wrong": "not-a-configured-token", **TOKENS}
RANK = {"read": 1, "write": 2, "admin": 3}


def _read(c: httpx.Client, admin: httpx.Client) -> httpx.Response:
    return c.get("/branches/main/tables/Person")


def _write(c: httpx.Client, admin: httpx.Client) -> httpx.Response:
    return c.post("/branches", json={"name": unique("auth/w")})


def _delete(c: httpx.Client, admin: httpx.Client) -> httpx.Response:
    name = unique("auth/d")
    assert admin.post("/branches", json={"name": name}).status_code == 201
    return c.delete(f"/branches/{name}")


ENDPOINTS: dict[str, tuple[str, Callable[[httpx.Client, httpx.Client], httpx.Response], int]] = {
    "read": ("read", _read, 200),
    "write": ("write", _write, 201),
    "admin": ("admin", _delete, 204),
}


@pytest.mark.parametrize("caller", list(CALLERS))
@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_auth_matrix(server: Server, admin: httpx.Client, caller: str, endpoint: str) -> None:
    needs, call, ok = ENDPOINTS[endpoint]
    with server.client(CALLERS[caller]) as c:
        r = call(c, admin)
    if caller in ("none", "wrong"):
        expected, type_ = 401, "Unauthorized"
    elif RANK[caller] < RANK[needs]:
        expected, type_ = 403, "Forbidden"
    else:
        expected, type_ = ok, None
    assert r.status_code == expected, r.text
    if type_ is not None:
        assert r.json()["error"]["type"] == type_
        if expected == 401:
            assert r.headers["www-authenticate"] == "Bearer"
        assert "not-a-configured-token" not in r.text


@pytest.mark.parametrize(
    "header",
    [
        "Basic dXNlcjpwYXNz",
        "Bearer",
        "Bearer\tx y",
        READ_TOKEN,
        f"Bearer {READ_TOKEN}x",
        f"Bearer {READ_TOKEN[:-1]}",
    ],
)
def test_malformed_or_near_miss_tokens_are_401(server: Server, header: str) -> None:
    r = httpx.get(f"{server.url}/branches", headers={"Authorization": header})
    assert r.status_code == 401, r.text


def test_every_route_needs_a_token_except_health(server: Server, anon: httpx.Client) -> None:
    spec = anon.get("/openapi.json").json()
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            secured = any("HTTPBearer" in s for s in op.get("security", []))
            assert secured == (path != "/health"), (method, path)


# --- protected branches ------------------------------------------------------------------


def test_protected_branch_changes_only_through_merge(
    writer: httpx.Client, admin: httpx.Client, reader: httpx.Client
) -> None:
    before = head(reader, "main")
    r = admin.post(
        "/branches/main/mutations",
        json={"operations": [{"op": "insert", "table": "Person", "rows": [{"name": "Sneaky"}]}]},
    )
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "ProtectedBranchError"
    assert "protected" in r.json()["error"]["message"] and "merg" in r.json()["error"]["message"]
    r = admin.post("/branches/main/load", content=b'{"type": "Person", "data": {"name": "S"}}')
    assert r.status_code == 403 and r.json()["error"]["type"] == "ProtectedBranchError"
    assert admin.delete("/branches/main").status_code == 403
    assert head(reader, "main") == before


def test_merge_into_a_protected_branch_needs_write(server: Server, tmp_path: Path) -> None:
    """Merging into `main` works with a write token (here on a server of its own, so the
    shared server's `main` stays as seeded)."""
    seed(tmp_path / "graph")
    config = tmp_path / "c.json"
    config.write_text(
        '{"protected_branches": ["main"], "tokens": ['
        f'{{"token": "{READ_TOKEN}", "scope": "read"}}, '
        f'{{"token": "{WRITE_TOKEN}", "scope": "write"}}]}}'
    )
    srv = Server(
        tmp_path / "graph",
        tmp_path,
        ["--config", str(config)],
        env={"GRAPHLAKE_TOKENS": f"env-admin-token-0a:admin,{WRITE_TOKEN}x:read"},
    )
    srv.start()
    try:
        with (
            srv.client(WRITE_TOKEN) as w,
            srv.client(READ_TOKEN) as r,
            srv.client("env-admin-token-0a") as a,
            srv.client(f"{WRITE_TOKEN}x") as r2,
        ):
            assert w.post("/branches", json={"name": "fix"}).status_code == 201
            mutate(w, "fix", {"op": "insert", "table": "Person", "rows": [{"name": "Lee"}]})
            assert r.post("/merge", json={"source": "fix", "into": "main"}).status_code == 403
            m = w.post("/merge", json={"source": "fix", "into": "main"})
            assert m.status_code == 200 and m.json()["outcome"] == "fast_forward"
            assert head(r, "main") == m.json()["commit"]
            # Tokens from GRAPHLAKE_TOKENS count too.
            assert a.delete("/branches/fix").status_code == 204
            assert r2.get("/branches").status_code == 200
            assert r2.post("/branches", json={"name": "no"}).status_code == 403
    finally:
        srv.stop()


# --- start-up ----------------------------------------------------------------------------


def test_no_tokens_refuses_to_start(tmp_path: Path) -> None:
    seed(tmp_path / "graph")
    env = {k: v for k, v in os.environ.items() if k != "GRAPHLAKE_TOKENS"}
    proc = subprocess.run(
        [*serve_command(), str(tmp_path / "graph"), "--port", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1, proc.stderr
    assert "no tokens configured" in proc.stderr and "--no-auth" in proc.stderr


def test_bad_config_refuses_to_start(tmp_path: Path) -> None:
    seed(tmp_path / "graph")
    config = tmp_path / "bad.toml"
    config.write_text('[[tokens]]\ntoken = "s3cret-value"\nscope = "superuser"\n')
    proc = subprocess.run(
        [*serve_command(), str(tmp_path / "graph"), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1
    assert "unknown token scope 'superuser'" in proc.stderr
    assert "s3cret-value" not in proc.stderr


def test_no_auth_allows_everything_with_a_warning(tmp_path: Path) -> None:
    seed(tmp_path / "graph")
    srv = Server(tmp_path / "graph", tmp_path, ["--no-auth"]).start()
    try:
        with srv.client() as c:
            assert c.post("/branches", json={"name": "open"}).status_code == 201
            assert c.delete("/branches/open").status_code == 204
    finally:
        srv.stop()
    assert "authentication is off" in srv.log()


def test_tokens_never_reach_logs_or_bodies(server: Server, reader: httpx.Client) -> None:
    # Requests with every token, wrong ones, and failing ones have been made by now (this
    # module runs after the matrix); make a few more that fail in different ways.
    for token in (*TOKENS.values(), "wrong-token-abc"):
        with server.client(token) as c:
            c.get("/branches/nope/log")
            c.post("/branches/main/sql", json={"query": "DROP TABLE Person"})
            r = c.post("/branches", content=b"{")
            assert token not in r.text
    log = server.log()
    assert "GET /branches" in log  # the access log is on
    for token in (*TOKENS.values(), "wrong-token-abc", ADMIN_TOKEN):
        assert token not in log
