"""The security audit's attacks (issue 12, items 5-10 and 12), each against a real server.

One server for the module, with small limits so every attack is cheap, running in a
working directory that holds a `.tmp` folder (DuckDB's default temp directory).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import graphlake as gl
from graphlake.server import routing
from graphlake.server.app import create_app
from graphlake.server.config import Limits, ServerConfig
from tests.server.harness import (
    ADMIN_TOKEN,
    HOST,
    READ_TOKEN,
    WRITE_TOKEN,
    Server,
    head,
    rows,
    seed,
    unique,
    write_config,
)

BODY_LIMIT = 64 * 1024
LIMITS = {
    "max_body_bytes": BODY_LIMIT,
    "max_upload_bytes": BODY_LIMIT,
    "max_operations": 5,
    "max_concurrent_reads": 1,
    "max_concurrent_loads": 1,
    "sql_max_rows": 500,
    "sql_timeout_s": 2,
    "sql_max_query_chars": 4096,
    "sql_max_result_bytes": 1024 * 1024,
    "sql_memory_limit_mb": 64,
    "sql_threads": 1,
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("security")
    (d / ".tmp").mkdir()
    (d / ".tmp" / "notes.txt").write_text("a secret note\n")
    return d


@pytest.fixture(scope="module")
def server(workdir: Path) -> Iterator[Server]:
    seed(workdir / "graph")
    config = write_config(workdir / "server.toml", protected=["main", "release"], limits=LIMITS)
    srv = Server(workdir / "graph", workdir, ["--config", str(config)], cwd=workdir).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def reader(server: Server) -> Iterator[httpx.Client]:
    with server.client(READ_TOKEN) as c:
        yield c


@pytest.fixture(scope="module")
def writer(server: Server) -> Iterator[httpx.Client]:
    with server.client(WRITE_TOKEN) as c:
        yield c


@pytest.fixture(scope="module")
def admin(server: Server) -> Iterator[httpx.Client]:
    with server.client(ADMIN_TOKEN) as c:
        yield c


def error_of(r: httpx.Response, status: int, type_: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["type"] == type_, r.text
    return r.json()["error"]["message"]


def sql_error(
    reader: httpx.Client, query: str, status: int = 400, type_: str = "QueryError"
) -> str:
    return error_of(reader.post("/branches/main/sql", json={"query": query}), status, type_)


# --- 5: bodies are read only after the token is checked, and parsed off the loop ----------


def _raw_request_head(server: Server, path: str, declared: int, token: str | None) -> bytes:
    """Send only the head of a POST declaring `declared` body bytes; the server's reply."""
    host, port = server.url.removeprefix("http://").split(":")
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head_ = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"{auth}Content-Length: {declared}\r\n\r\n"
    )
    with socket.create_connection((HOST, int(port)), timeout=10) as s:
        s.sendall(head_.encode())
        try:
            return s.recv(4096)
        except TimeoutError:
            return b""  # the server sat waiting for the body


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_a_body_without_a_valid_token_is_refused_before_it_is_read(
    server: Server, token: str | None
) -> None:
    reply = _raw_request_head(server, "/branches/main/sql", BODY_LIMIT - 1, token)
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert b"Unauthorized" in reply


@pytest.mark.parametrize("path", ["/branches/dev/load", "/branches/dev/mutations", "/merge"])
def test_a_write_needs_a_write_token_before_its_body_is_read(server: Server, path: str) -> None:
    reply = _raw_request_head(server, path, BODY_LIMIT - 1, READ_TOKEN)
    assert reply.startswith(b"HTTP/1.1 403"), reply[:200]


def test_json_bodies_are_parsed_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = gl.Graph.init(tmp_path / "g", "node Person { name: String @key }")
    app = create_app(g, ServerConfig(no_auth=True))
    threads: list[str] = []

    class Json:
        @staticmethod
        def loads(data: bytes) -> object:
            threads.append(threading.current_thread().name)
            return json.loads(data)

    monkeypatch.setattr(routing, "json", Json)
    with TestClient(app) as client:
        loop_thread = client.portal.call(lambda: threading.current_thread().name)
        r = client.post("/branches/main/sql", json={"query": "SELECT 1 AS one"})
    assert r.status_code == 200, r.text
    assert threads and loop_thread not in threads


def test_the_default_body_limit_is_small(tmp_path: Path) -> None:
    assert Limits().max_body_bytes == 1024 * 1024
    g = gl.Graph.init(tmp_path / "g", "node Person { name: String @key }")
    with TestClient(create_app(g, ServerConfig(no_auth=True))) as client:
        big = {"query": "SELECT 1 -- " + "x" * (1024 * 1024)}
        r = client.post("/branches/main/sql", json=big)
    assert r.status_code == 413, r.text


# --- 6: SQL is bounded in text, time, memory and result size ------------------------------


def test_sql_query_text_is_bounded(reader: httpx.Client) -> None:
    query = "SELECT 1 WHERE 1 IN (" + ",".join(map(str, range(100_000))) + ")"
    r = reader.post("/branches/main/sql", json={"query": query})
    # The body limit or the query limit answers; either way nothing is parsed.
    assert r.status_code in (400, 413), r.text
    message = sql_error(
        reader, "SELECT 1 WHERE 1 IN (" + ",".join(["1"] * 3000) + ")", 413, "QueryTooLargeError"
    )
    assert "sql_max_query_chars" in message


def test_a_huge_aggregate_is_stopped_by_the_memory_or_time_limit(reader: httpx.Client) -> None:
    started = time.monotonic()
    r = reader.post(
        "/branches/main/sql", json={"query": "SELECT list(repeat('x', 300)) FROM range(1000000)"}
    )
    assert time.monotonic() - started < 15  # the audit saw 22.9 s with a 3 s limit
    assert r.status_code in (408, 413), r.text
    message = r.json()["error"]["message"]
    assert "memory" in message or "timed out" in message


def test_sql_result_bytes_are_bounded(reader: httpx.Client) -> None:
    message = sql_error(reader, "SELECT repeat('x', 2000000) AS big", 413, "QueryTooLargeError")
    assert "sql_max_result_bytes" in message


def test_a_long_query_times_out(reader: httpx.Client) -> None:
    started = time.monotonic()
    message = sql_error(
        reader, "SELECT count(*) FROM range(100000000000)", 408, "QueryTimeoutError"
    )
    assert "timed out" in message and time.monotonic() - started < 15


def test_the_time_limit_covers_the_whole_request() -> None:
    """Set-up (here: opening the tables) counts too, and an interrupt that lands while
    DuckDB runs nothing is not lost."""
    from graphlake.read.sql import run_sql

    class SlowTables:
        def datasets(self) -> dict:
            time.sleep(0.5)
            return {}

    with pytest.raises(gl.QueryError, match="timed out"):
        run_sql(SlowTables(), "SELECT 1", timeout_s=0.2)  # type: ignore[arg-type]


# --- 8: SQL cannot touch files, even DuckDB's temp directory ------------------------------


def test_sql_cannot_read_the_temp_directory(reader: httpx.Client) -> None:
    message = sql_error(reader, "SELECT * FROM read_text('.tmp/notes.txt')")
    assert "a secret note" not in message


def test_explain_analyze_cannot_write_files(reader: httpx.Client, workdir: Path) -> None:
    for query in (
        "EXPLAIN ANALYZE COPY (SELECT 1) TO '.tmp/fill.csv'",
        "/* hi */ EXPLAIN /* there */ ANALYZE COPY (SELECT 1) TO '.tmp/fill.csv'",
        "EXPLAIN (FORMAT json) COPY (SELECT 1) TO '.tmp/fill.csv'",
    ):
        assert "EXPLAIN" in sql_error(reader, query)
    assert not (workdir / ".tmp" / "fill.csv").exists()
    r = reader.post(
        "/branches/main/sql", json={"query": "EXPLAIN ANALYZE SELECT count(*) FROM Person"}
    )
    assert r.status_code == 200, r.text


# --- 12: results Python cannot represent are typed errors --------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "DATE '10000-01-01'",
        "'infinity'::DATE",
        "TIMESTAMP '10000-01-01 00:00:00'",
        "['-infinity'::DATE]",
    ],
)
def test_out_of_range_dates_are_a_typed_error(reader: httpx.Client, expr: str) -> None:
    assert "VARCHAR" in sql_error(reader, f"SELECT {expr} AS d")


def test_cli_sql_out_of_range_date_is_one_line(server: Server) -> None:
    from typer.testing import CliRunner

    from graphlake.cli.app import app

    result = CliRunner().invoke(app, ["sql", str(server.root), "SELECT 'infinity'::DATE"])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "VARCHAR" in lines[0]


# --- 7: where= allows only a safe filter grammar -----------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "length(repeat(name, 100000000)) > 0",
        "name = 'Alice'; DROP TABLE Person",
        "name = 'Alice' -- and the rest",
        "age + 1 > 2",
        "NOT " * 40 + "age > 1",
    ],
)
def test_where_refuses_anything_but_the_filter_grammar(reader: httpx.Client, where: str) -> None:
    started = time.monotonic()
    r = reader.get("/branches/main/tables/Person", params={"where": where})
    assert "filter" in error_of(r, 400, "QueryError")
    assert time.monotonic() - started < 5


def test_where_grammar_still_filters(reader: httpx.Client) -> None:
    def names(where: str) -> set[str]:
        return {r["name"] for r in rows(reader, "main", "Person", where=where)}

    assert names("name IN ('Alice', 'Carol')") == {"Alice", "Carol"}
    assert names("name LIKE 'A%' OR age IS NULL") == {"Alice", "Carol"}
    assert names("NOT (age BETWEEN 35 AND 50) AND born = DATE '1994-03-04'") == {"Alice"}
    assert names("\"age\" >= 30 and `name` <> 'Bob'") == {"Alice"}


def test_where_is_checked_in_the_read_layer(server: Server) -> None:
    from typer.testing import CliRunner

    from graphlake.cli.app import app

    g = gl.Graph.open(server.root)
    with pytest.raises(gl.QueryError, match="not a valid filter"):
        g.nodes("Person", where="length(repeat(name, 100000000)) > 0")
    with pytest.raises(gl.QueryError, match="unknown column 'shoe'"):
        g.nodes("Person", where="shoe = 1")
    result = CliRunner().invoke(
        app, ["show", str(server.root), "Person", "--where", "name = 'Alice'; SELECT 1"]
    )
    assert result.exit_code == 1 and result.output.startswith("error:"), result.output


def test_concurrent_reads_are_capped(reader: httpx.Client, server: Server) -> None:
    slow = threading.Thread(
        target=lambda: reader.post(
            "/branches/main/sql", json={"query": "SELECT count(*) FROM range(100000000000)"}
        )
    )
    slow.start()
    try:
        # The slow query holds the only read slot for its 2 s once the server has taken
        # it; on a loaded machine that may take a while, so ask until it is refused.
        with server.client(READ_TOKEN) as other:
            r = other.get("/branches/main/tables/Person")
            while r.status_code == 200 and slow.is_alive():
                time.sleep(0.05)
                r = other.get("/branches/main/tables/Person")
        assert "max_concurrent_reads" in error_of(r, 503, "ServerBusy")
        assert r.headers["retry-after"] == "1"
    finally:
        slow.join()


# --- 9: protected branches are created (and deleted) by an admin only ---------------------


def test_a_write_token_cannot_create_a_protected_branch(
    writer: httpx.Client, admin: httpx.Client, reader: httpx.Client
) -> None:
    r = writer.post("/branches", json={"name": "release", "from": "main"})
    assert "admin" in error_of(r, 403, "ProtectedBranchError")
    assert "release" not in {b["name"] for b in reader.get("/branches").json()["branches"]}
    r = admin.post("/branches", json={"name": "release", "from": "main"})
    assert r.status_code == 201 and r.json()["protected"], r.text
    error_of(writer.delete("/branches/release", params={"force": "true"}), 403, "Forbidden")
    error_of(admin.delete("/branches/release"), 403, "ProtectedBranchError")
    assert admin.delete("/branches/release", params={"force": "true"}).status_code == 204
    assert "release" not in {b["name"] for b in reader.get("/branches").json()["branches"]}


# --- 10: operations per request and concurrent loads are bounded --------------------------


def test_operations_per_request_are_capped(writer: httpx.Client, reader: httpx.Client) -> None:
    branch = unique("sec/ops")
    assert writer.post("/branches", json={"name": branch, "from": "main"}).status_code == 201
    before = head(reader, branch)
    ops = [{"op": "insert", "table": "Company", "rows": [{"name": f"C{i}"}]} for i in range(6)]
    r = writer.post(f"/branches/{branch}/mutations", json={"operations": ops})
    assert "max_operations" in error_of(r, 413, "TooManyOperations")
    assert head(reader, branch) == before
    r = writer.post(f"/branches/{branch}/mutations", json={"operations": ops[:5]})
    assert r.status_code == 200, r.text


def test_concurrent_loads_are_capped(writer: httpx.Client, server: Server) -> None:
    branch = unique("sec/load")
    assert writer.post("/branches", json={"name": branch, "from": "main"}).status_code == 201
    record = b'{"type": "Company", "data": {"name": "Slow"}}\n'

    def trickle() -> Iterator[bytes]:
        yield record
        time.sleep(3)  # holds the only load slot meanwhile

    results: list[httpx.Response] = []
    first = threading.Thread(
        target=lambda: results.append(writer.post(f"/branches/{branch}/load", content=trickle()))
    )
    first.start()
    try:
        time.sleep(0.5)
        with server.client(WRITE_TOKEN) as other:
            r = other.post(f"/branches/{branch}/load", content=record)
        assert "max_concurrent_loads" in error_of(r, 503, "ServerBusy")
    finally:
        first.join()
    assert results[0].status_code == 200, results[0].text
