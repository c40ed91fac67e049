"""HTTP attacks of issue 22 items 7-8, each against a real server on 127.0.0.1.

- `--no-auth`: cross-site writes (simple content types, a foreign `Origin`) and foreign
  `Host` headers (DNS rebinding) are refused; merge previews write nothing under the
  graph root; previews, diffs and history count against `max_concurrent_reads`.
- failed authentications answer after a growing delay without delaying anyone else;
  short tokens are refused at start; UI sessions are capped per token; table reads and
  search results stop at the result byte cap; `/docs` loads no third-party script.

Every test checks that `/health` still answers. CI budget: about 30 CPU-seconds (two
servers; the delays are sleeps).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app as cli_app
from graphlake.server.config import ConfigError, Scope, ServerConfig, load_config
from tests.server.harness import READ_TOKEN, WRITE_TOKEN, Server, write_config
from tests.ui.harness import csrf_of

SCHEMA = """
node Person { name: String @key  age: I32? }
node Doc { name: String @key  body: String @search }
"""
RESULT_CAP = 64 * 1024
SESSIONS_PER_TOKEN = 3


def error_of(r: httpx.Response, status: int, type_: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["type"] == type_, r.text
    return r.json()["error"]["message"]


def healthy(server: Server) -> None:
    started = time.monotonic()
    assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200
    assert time.monotonic() - started < 1.0


def files_under(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _seed(root: Path) -> None:
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": "Alice", "age": 30}, {"name": "Bob"}])
        w.insert(
            "Doc",
            [
                {"name": "big1", "body": "word " + "a" * 40_000},
                {"name": "big2", "body": "word " + "b" * 40_000},
                {"name": "huge", "body": "word " + "c" * 100_000},
            ],
        )
    # A schema merge to preview: dev adds a property and a row, main gains a row.
    g.create_branch("dev")
    g.apply_schema(SCHEMA.replace("age: I32? }", "age: I32?  nick: String? }"), branch="dev")
    with g.write("dev", message="dev row") as w:
        w.insert("Person", [{"name": "Dee", "nick": "d"}])
    with g.write(message="main row") as w:
        w.insert("Person", [{"name": "Carl"}])


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("noauth")
    _seed(d / "graph")
    srv = Server(d / "graph", d, ["--no-auth"]).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("guarded")
    _seed(d / "graph")
    config = write_config(
        d / "server.toml",
        protected=[],
        limits={
            "max_concurrent_reads": 1,
            "sql_max_result_bytes": RESULT_CAP,
            "ui_sessions_per_token": SESSIONS_PER_TOKEN,
            # The read-cap test holds the one read slot with a query that runs until this.
            "sql_timeout_s": 9,
            "sql_threads": 1,
        },
    )
    srv = Server(d / "graph", d, ["--config", str(config)]).start()
    yield srv
    srv.stop()


def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


# --- 7: --no-auth is safe on localhost -------------------------------------------------


def test_cross_site_writes_without_auth_are_refused(open_server: Server) -> None:
    with open_server.client() as c:
        before = c.get("/branches/main/tables/Person").json()["rows"]
        line = b'{"type": "Person", "data": {"name": "Mallory"}}\n'
        for kind in (
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            None,
        ):
            headers = {"Content-Type": kind} if kind else {}
            for mode in ("append", "overwrite"):
                r = c.post(
                    "/branches/main/load", params={"mode": mode}, content=line, headers=headers
                )
                assert "Content-Type" in error_of(r, 415, "UnsupportedMediaType")
        r = c.post(
            "/branches/main/mutations",
            content=b'{"message": "m", "operations": []}',
            headers={"Content-Type": "text/plain"},
        )
        error_of(r, 415, "UnsupportedMediaType")
        # The real content type from another site's page: its Origin gives it away.
        r = c.post(
            "/branches",
            json={"name": "evil", "from": "main"},
            headers={"Origin": "http://evil.example"},
        )
        error_of(r, 403, "CrossOriginRequest")
        assert c.get("/branches/main/tables/Person").json()["rows"] == before
        assert "evil" not in [b["name"] for b in c.get("/branches").json()["branches"]]
        # A real client: the real content type, no Origin or its own.
        r = c.post(
            "/branches", json={"name": "ok", "from": "main"}, headers={"Origin": open_server.url}
        )
        assert r.status_code == 201, r.text
        r = c.post(
            "/branches/ok/load", content=line, headers={"Content-Type": "application/x-ndjson"}
        )
        assert r.status_code == 200, r.text
    healthy(open_server)


@pytest.mark.parametrize("which", ["open_server", "guarded"])
def test_a_foreign_host_header_is_refused(which: str, request: pytest.FixtureRequest) -> None:
    server: Server = request.getfixturevalue(which)
    port = port_of(server)
    with server.client(READ_TOKEN) as c:
        for host in (
            f"evil.example:{port}",
            "evil.example",
            f"127.0.0.1:{port + 1}",
            f"localhost.evil.example:{port}",
        ):
            r = c.get("/branches", headers={"Host": host})
            assert "127.0.0.1:" in error_of(r, 400, "HostNotAllowed"), host
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
            assert c.get("/branches", headers={"Host": host}).status_code == 200, host
    healthy(server)


def test_merge_previews_write_nothing_under_the_root(open_server: Server) -> None:
    before = files_under(open_server.root)
    with open_server.client() as c, httpx.Client(base_url=open_server.url, timeout=60) as ui:
        for _ in range(3):
            r = c.post("/merge", json={"source": "dev", "into": "main", "dry_run": True})
            assert r.status_code == 200 and r.json()["outcome"] == "merged", r.text
            r = ui.get("/ui/merge", params={"source": "dev", "into": "main"})
            assert r.status_code == 200 and "merged" in r.text, r.text
    assert files_under(open_server.root) == before
    healthy(open_server)


def test_previews_diffs_and_history_count_against_the_read_cap(guarded: Server) -> None:
    pages = login(guarded, READ_TOKEN)
    holder = guarded.client(READ_TOKEN)
    slow: list[threading.Thread] = []

    def hold_the_read_slot(c: httpx.Client) -> threading.Thread:
        """A query holding the only read slot (until sql_timeout_s), once it has it."""
        if slow and slow[-1].is_alive():
            return slow[-1]
        slow.append(
            threading.Thread(
                target=lambda: holder.post(
                    "/branches/main/sql", json={"query": "SELECT count(*) FROM range(100000000000)"}
                )
            )
        )
        slow[-1].start()
        while c.get("/branches/main/tables/Person").status_code == 200:
            assert slow[-1].is_alive()
            time.sleep(0.05)
        return slow[-1]

    try:
        with guarded.client(WRITE_TOKEN) as c:
            requests = {
                "diff": lambda: c.get("/diff", params={"a": "main", "b": "dev"}),
                "dry run": lambda: c.post(
                    "/merge", json={"source": "dev", "into": "main", "dry_run": True}
                ),
                "log": lambda: c.get("/branches/main/log"),
                "ui merge": lambda: pages.get("/ui/merge", params={"source": "dev"}),
                "ui diff": lambda: pages.get("/ui/diff", params={"a": "main", "b": "dev"}),
                "ui history": lambda: pages.get("/ui/history"),
            }
            for what, send in requests.items():
                for _ in range(3):  # on a loaded machine the holder may end meanwhile
                    held = hold_the_read_slot(c)
                    started = time.monotonic()
                    r = send()
                    took = time.monotonic() - started
                    if held.is_alive():
                        break
                assert r.status_code == 503, (what, r.text[:300])
                assert "max_concurrent_reads" in r.text, what
                assert took < 2.5, what
                healthy(guarded)
    finally:
        for t in slow:
            t.join()
        holder.close()
        pages.close()


# --- 8: the small ones -----------------------------------------------------------------


def test_failed_authentications_are_answered_late(guarded: Server) -> None:
    bad = guarded.client("not-a-token-at-all-0000")
    took = []
    for n in range(5):
        started = time.monotonic()
        if n % 2:  # a body: refused before it is read, late all the same
            r = bad.post("/branches/main/sql", json={"query": "SELECT 1"})
        else:
            r = bad.get("/branches")
        assert r.status_code == 401, r.text
        took.append(time.monotonic() - started)
    assert took[-1] > took[0] and sum(took) > 2.5, took  # 0.1 + 0.2 + 0.4 + 0.8 + 1.6 s
    # While a failure waits, a valid token from the same address, /health and an
    # anonymous request are answered at once.
    waiting = threading.Thread(target=lambda: bad.get("/branches"))
    waiting.start()
    time.sleep(0.2)
    with guarded.client(READ_TOKEN) as good:
        for _ in range(3):
            started = time.monotonic()
            assert good.get("/branches").status_code == 200
            assert time.monotonic() - started < 2.0  # the failure waits 3 s
    healthy(guarded)
    started = time.monotonic()
    assert httpx.get(f"{guarded.url}/branches").status_code == 401  # missing: no guess
    assert time.monotonic() - started < 2.0
    assert waiting.is_alive()  # still held: its delay is seconds by now
    waiting.join()
    # X-Forwarded-For gives no fresh address: the server trusts no proxy header.
    started = time.monotonic()
    r = bad.get("/branches", headers={"X-Forwarded-For": "127.0.0.9"})
    assert r.status_code == 401 and time.monotonic() - started > 1.0
    # The login form is throttled the same way (same address, so later still).
    with httpx.Client(base_url=guarded.url, timeout=60) as ui:
        form = ui.get("/ui/login")
        started = time.monotonic()
        r = ui.post("/ui/login", data={"csrf": csrf_of(form), "token": "guess-0123456789"})
        assert r.status_code == 401 and time.monotonic() - started > 1.0
    bad.close()


def test_short_tokens_are_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="shorter than 16 characters") as caught:
        ServerConfig(tokens={"fifteen-chars-x": Scope.read}).check()
    assert "fifteen" not in str(caught.value)  # never echo a token
    ServerConfig(tokens={"sixteen-chars-xy": Scope.read}).check()
    ServerConfig(tokens={"short": Scope.read}, allow_short_tokens=True).check()
    assert load_config(
        env={"GRAPHLAKE_TOKENS": "short:read"}, allow_short_tokens=True
    ).allow_short_tokens
    gl.Graph.init(tmp_path / "g", SCHEMA)
    result = CliRunner().invoke(
        cli_app, ["serve", str(tmp_path / "g")], env={"GRAPHLAKE_TOKENS": "short:admin"}
    )
    assert result.exit_code == 1 and "--allow-short-tokens" in result.output, result.output


def login(server: Server, token: str) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=60)
    form = client.get("/ui/login")
    r = client.post("/ui/login", data={"csrf": csrf_of(form), "token": token})
    assert r.status_code == 303, r.text
    return client


def logged_in(client: httpx.Client) -> bool:
    return client.get("/ui/branches").status_code == 200  # else a redirect to the login


def test_a_token_evicts_only_its_own_oldest_sessions(guarded: Server) -> None:
    other = login(guarded, WRITE_TOKEN)
    mine = [login(guarded, READ_TOKEN) for _ in range(SESSIONS_PER_TOKEN + 20)]
    assert logged_in(other)  # another token's session survives any number of logins
    assert [logged_in(c) for c in mine[-SESSIONS_PER_TOKEN - 1 :]] == [False] + [True] * 3
    for c in (other, *mine):
        c.close()
    healthy(guarded)


def test_table_reads_and_search_stop_at_the_result_byte_cap(guarded: Server) -> None:
    with guarded.client(READ_TOKEN) as c:
        # big1 (40 KB) fits the 64 KiB cap, big1 + big2 does not: the page ends early.
        first = c.get("/branches/main/tables/Doc", params={"limit": 10})
        assert first.status_code == 200, first.text
        assert [r["name"] for r in first.json()["rows"]] == ["big1"]
        second = c.get(
            "/branches/main/tables/Doc", params={"limit": 10, "cursor": first.json()["next_cursor"]}
        )
        assert [r["name"] for r in second.json()["rows"]] == ["big2"]
        r = c.get(
            "/branches/main/tables/Doc",
            params={"limit": 10, "cursor": second.json()["next_cursor"]},
        )
        assert "'huge'" in error_of(r, 413, "ResultTooLarge")
        names = c.get("/branches/main/tables/Doc", params={"columns": "name"}).json()
        assert [r["name"] for r in names["rows"]] == ["big1", "big2", "huge"]
        r = c.post("/branches/main/search", json={"type": "Doc", "text": "word", "k": 3})
        assert "sql_max_result_bytes" in error_of(r, 413, "ResultTooLarge")
        r = c.post(
            "/branches/main/search",
            json={"type": "Doc", "text": "word", "k": 3, "columns": ["name"]},
        )
        assert r.status_code == 200 and len(r.json()["rows"]) == 3, r.text
    healthy(guarded)


def test_docs_load_no_third_party_script(guarded: Server) -> None:
    with guarded.client() as c:
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            assert c.get(path).status_code == 404, path
        spec = c.get("/openapi.json")  # the schema stays, open like /health (no data)
        assert spec.status_code == 200 and spec.json()["paths"]
        assert spec.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in spec.headers["content-security-policy"]
        assert spec.headers["x-content-type-options"] == "nosniff"
    healthy(guarded)
