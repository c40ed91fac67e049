"""Row history, blame and the change feed: typed errors (nothing changes), cursors
across branch resets and gc, the fallback when lineage is unavailable, edges and
float32 values, and the HTTP and CLI surfaces."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import graphlake as gl
from graphlake.errors import (
    BranchNotFoundError,
    ChangeFeedError,
    CursorExpiredError,
    CursorResetError,
    RowNotFoundError,
    UnknownTableError,
)
from graphlake.server.app import create_app
from graphlake.server.config import Scope, ServerConfig
from tests.cli.helpers import run_all

SCHEMA = (
    "node Person { name: String @key\n age: I32?\n score: F32? }\n"
    "edge Knows: Person -> Person { since: I32? }\n"
)
TOKEN = "read-token-1234567890"


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    graph = gl.Graph.init(tmp_path_factory.mktemp("tls") / "g", SCHEMA, author="init")
    with graph.write(message="people", author="Ann <ann@x.org>") as w:
        w.insert("Person", [{"name": "a", "age": 1, "score": 0.1}, {"name": "b"}])
        w.insert("Knows", [{"src": "a", "dst": "b", "since": 2001}])
    graph.create_branch("dev")
    with graph.write("dev", message="dev age", author="Dev") as w:
        w.update("Person", [{"name": "a", "age": 2}])
    with graph.write(message="main score", author="Ann <ann@x.org>") as w:
        w.update("Person", [{"name": "a", "score": 0.3}])
    graph.merge("dev", author="Merger")
    return graph


def test_history_blame_and_feed_of_a_small_graph(g: gl.Graph) -> None:
    hist = g.row_history("Person", "a")
    assert [(e.message, e.op) for e in hist] == [
        ("merge dev into main", "update"),
        ("main score", "update"),
        ("people", "insert"),
    ]
    assert hist[0].changes == {"age": (1, 2)} and hist[0].author == "Merger"
    assert hist[1].changes == {"score": (0.1, 0.3)}  # float32 as written, not widened
    blame = {b.property: (b.value, b.message) for b in g.blame("Person", "a")}
    assert blame == {
        "name": ("a", "people"),
        "age": (2, "dev age"),
        "score": (0.3, "main score"),
    }  # the dev commit, not the merge
    edge_id = g.edges("Knows").column("id")[0].as_py()
    [edge] = g.row_history("Knows", edge_id)
    assert edge.op == "insert" and edge.changes["since"] == (None, 2001)
    page = g.changes()
    assert [(e.table, e.key, e.op) for e in page.entries] == [
        ("Knows", edge_id, "insert"),
        ("Person", "a", "insert"),
        ("Person", "b", "insert"),
        ("Person", "a", "update"),
        ("Person", "a", "update"),
    ]


def test_typed_errors(g: gl.Graph, tmp_path: Path) -> None:
    head = g.head().id
    with pytest.raises(UnknownTableError):
        g.row_history("Nope", "a")
    with pytest.raises(RowNotFoundError):
        g.row_history("Person", "zz")
    with pytest.raises(RowNotFoundError):
        g.blame("Person", "zz")
    with pytest.raises(BranchNotFoundError):
        g.row_history("Person", "a", branch="nope")
    with pytest.raises(BranchNotFoundError):
        g.changes("nope")
    with pytest.raises(ValueError):
        g.row_history("Person", "a", limit=0)
    for limit in (0, 10_001, -1):
        with pytest.raises(ChangeFeedError, match="limit"):
            g.changes(limit=limit)
    cursor = g.changes(limit=1).cursor
    with pytest.raises(ChangeFeedError, match="branch"):
        g.changes("dev", since=cursor)
    tampered = cursor[:-3] + ("AAA" if cursor[-3:] != "AAA" else "BBB")
    for bad in ("", "nonsense", "glc1.!!!", tampered):
        with pytest.raises(ChangeFeedError, match="not a change-feed cursor"):
            g.changes(since=bad)
    other = gl.Graph.init(tmp_path / "other", SCHEMA)
    with pytest.raises(ChangeFeedError, match="not a change-feed cursor"):
        other.changes(since=cursor)  # another graph's cursor
    assert g.head().id == head


def test_a_reset_past_the_cursor_and_gc_are_typed(tmp_path: Path) -> None:
    graph = gl.Graph.init(tmp_path / "g", SCHEMA)
    with graph.write() as w:
        w.insert("Person", [{"name": "a"}])
    keep = graph.head().id
    graph.create_branch("dev")
    with graph.write("dev") as w:
        w.update("Person", [{"name": "a", "age": 7}])
    cursor = graph.changes("dev").cursor
    with graph.write("dev") as w:
        w.update("Person", [{"name": "a", "age": 8}])
    assert [e.changes for e in graph.changes("dev", since=cursor).entries] == [{"age": (7, 8)}]
    graph.reset_branch("dev", keep)
    with pytest.raises(CursorResetError) as reset:
        graph.changes("dev", since=cursor)
    assert reset.value.head == keep
    graph.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
    with pytest.raises(CursorExpiredError) as gone:
        graph.changes("dev", since=cursor)
    root = graph.log("dev")[-1].id
    assert gone.value.oldest == root and root[:12] in str(gone.value)


def test_without_lineage_history_and_feed_fall_back(
    g: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphlake.storage import lineage as lin

    hist, feed = g.row_history("Person", "a"), g.changes().entries

    def unavailable(*_: object, **__: object) -> None:
        raise lin.LineageUnavailable(lin.FallbackReason.HISTORY_CLEANED, "test")

    monkeypatch.setattr(lin, "candidates", unavailable)
    assert g.row_history("Person", "a") == hist
    assert g.changes().entries == feed


# --- HTTP ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(g: gl.Graph) -> Iterator[TestClient]:
    config = ServerConfig(tokens={TOKEN: Scope.read})
    with TestClient(
        create_app(g, config),
        base_url="http://127.0.0.1",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as c:
        yield c


def test_http_history_blame_and_changes(client: TestClient, g: gl.Graph) -> None:
    r = client.get("/branches/main/history/Person/a", params={"limit": 2})
    assert r.status_code == 200, r.text
    assert [e["op"] for e in r.json()["history"]] == ["update", "update"]
    assert r.json()["history"][0]["changes"] == {"age": {"old": 1, "new": 2}}
    r = client.get("/branches/main/blame/Person/a")
    assert {b["property"]: b["commit"] for b in r.json()["blame"]} == {
        b.property: b.commit for b in g.blame("Person", "a")
    }
    first = client.get("/branches/main/changes", params={"limit": 3}).json()
    rest = client.get("/branches/main/changes", params={"cursor": first["cursor"]}).json()
    assert len(first["changes"]) == 3 and len(rest["changes"]) == 2
    assert first["changes"] + rest["changes"] == g.changes().to_dict()["changes"]


def test_http_keys_with_a_slash(tmp_path: Path) -> None:
    """A key containing `/` (as is or encoded as %2F), also on a branch whose name has
    one: the rest of the path after the type is the key."""
    g = gl.Graph.init(tmp_path / "slash", "node Doc { path: String @key\n v: I32? }\n")
    with g.write() as w:
        w.insert("Doc", [{"path": "a/b", "v": 1}, {"path": "a", "v": 0}])
    g.create_branch("dev/x")
    with g.write("dev/x") as w:
        w.update("Doc", [{"path": "a/b", "v": 2}])
    config = ServerConfig(tokens={TOKEN: Scope.read})
    with TestClient(
        create_app(g, config),
        base_url="http://127.0.0.1",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as c:
        for path in ("/branches/main/history/Doc/a/b", "/branches/main/history/Doc/a%2Fb"):
            r = c.get(path)
            assert r.status_code == 200, (path, r.text)
            assert r.json()["key"] == "a/b"
            assert [e["op"] for e in r.json()["history"]] == ["insert"]
        r = c.get("/branches/dev/x/history/Doc/a/b")
        assert r.status_code == 200, r.text
        assert r.json()["branch"] == "dev/x"
        assert [e["op"] for e in r.json()["history"]] == ["update", "insert"]
        r = c.get("/branches/dev%2Fx/blame/Doc/a%2Fb")
        assert r.status_code == 200, r.text
        assert {b["property"]: b["value"] for b in r.json()["blame"]} == {"path": "a/b", "v": 2}
        assert c.get("/branches/main/blame/Doc/a").json()["blame"][1]["value"] == 0
        r = c.get("/branches/main/history/Doc/a/c")
        assert r.status_code == 404 and r.json()["error"]["type"] == "RowNotFoundError"


def test_http_errors(client: TestClient) -> None:
    cases = {
        "/branches/main/history/Person/zz": (404, "RowNotFoundError"),
        "/branches/main/history/Nope/a": (404, "UnknownTableError"),
        "/branches/nope/blame/Person/a": (404, None),
        "/branches/main/changes?cursor=junk": (400, "ChangeFeedError"),
        "/branches/main/changes?limit=0": (400, "ChangeFeedError"),
    }
    for path, (status, kind) in cases.items():
        r = client.get(path)
        assert r.status_code == status, (path, r.text)
        if kind:
            assert r.json()["error"]["type"] == kind
    assert (
        TestClient(client.app, base_url="http://127.0.0.1")
        .get("/branches/main/changes")
        .status_code
        == 401
    )


def test_http_gone_cursor_is_410(tmp_path: Path) -> None:
    graph = gl.Graph.init(tmp_path / "g", SCHEMA)
    graph.create_branch("dev")
    with graph.write("dev") as w:
        w.insert("Person", [{"name": "a"}])
    cursor = graph.changes("dev").cursor
    graph.reset_branch("dev", "main")
    config = ServerConfig(tokens={TOKEN: Scope.read})
    with TestClient(
        create_app(graph, config),
        base_url="http://127.0.0.1",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as c:
        r = c.get("/branches/dev/changes", params={"cursor": cursor})
        assert r.status_code == 409 and r.json()["error"]["type"] == "CursorResetError"
        graph.gc(grace=dt.timedelta(0), reflog_keep=dt.timedelta(0))
        r = c.get("/branches/dev/changes", params={"cursor": cursor})
        assert r.status_code == 410 and r.json()["error"]["type"] == "CursorExpiredError"


# --- CLI ----------------------------------------------------------------------------------


def test_cli_history_blame_changes(g: gl.Graph) -> None:
    root = g.uri
    hist, blame, feed, table, missing = run_all(
        ("history", root, "Person", "a", "--json"),
        ("blame", root, "Person", "a", "--json"),
        ("changes", root, "--limit", "2", "--json"),
        ("history", root, "Person", "a"),
        ("history", root, "Person", "zz"),
    )
    assert [e["op"] for e in json.loads(hist.stdout)] == ["update", "update", "insert"]
    assert {b["property"] for b in json.loads(blame.stdout)} == {"name", "age", "score"}
    page = json.loads(feed.stdout)
    assert len(page["changes"]) == 2
    rest = run_all(("changes", root, "--since", page["cursor"], "--json"))[0]
    assert len(json.loads(rest.stdout)["changes"]) == 3
    assert "merge dev" not in table.stdout and "Merger" in table.stdout
    assert "age: 1 -> 2" in table.stdout
    assert missing.returncode == 1 and "no commit" in missing.stderr


def test_cli_tables_read_at_80_columns(g: gl.Graph) -> None:
    env = {"COLUMNS": "80"}
    outs = run_all(
        ("history", g.uri, "Person", "a"),
        ("blame", g.uri, "Person", "a"),
        ("changes", g.uri),
        env=env,
    )
    for proc in outs:
        assert proc.returncode == 0, proc.stderr
        lines = [ln for ln in proc.stdout.splitlines() if not ln.startswith("cursor:")]
        assert max(len(ln) for ln in lines) <= 80
        assert " of " in lines[0] and "Person" in proc.stdout


def test_cli_follow_stops_on_ctrl_c_with_130(g: gl.Graph) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphlake.cli.app",
            "changes",
            g.uri,
            "--follow",
            "--json",
            "--interval",
            "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())  # the history so far, one page
        assert len(first["changes"]) == 5
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
