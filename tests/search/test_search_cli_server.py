"""`graphlake search` and `POST /branches/{b}/search`: the same results as `g.search`,
typed errors (CLI exit 1, HTTP 4xx), read scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app as cli
from graphlake.server.app import create_app
from graphlake.server.config import Scope, ServerConfig

SCHEMA = "node Doc { name: String @key, title: String @search, e: Vector(3) @index }"
ROWS = [
    {"name": "a", "title": "red apple", "e": [1.0, 0.0, 0.0]},
    {"name": "b", "title": "green apple", "e": [0.9, 0.1, 0.0]},
    {"name": "c", "title": "blue sky", "e": [0.0, 1.0, 0.0]},
    {"name": "d", "title": "red sky", "e": [0.0, 0.0, 1.0]},
]


@pytest.fixture(scope="module")
def g(tmp_path_factory) -> gl.Graph:
    g = gl.Graph.init(tmp_path_factory.mktemp("cli") / "g", SCHEMA)
    with g.write() as w:
        w.insert("Doc", ROWS)
    return g


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_cli_near_vector_file_text_and_explain(g, tmp_path: Path):
    code, out, _ = run("search", g.uri, "Doc", "--near", "a", "--k", "2", "--json")
    assert code == 0 and [r["name"] for r in json.loads(out)] == ["b", "c"]
    q = tmp_path / "q.json"
    q.write_text("[0, 0.1, 1]")
    code, out, _ = run("search", g.uri, "Doc", "--vector-file", str(q), "-k", "1", "--json")
    assert code == 0 and json.loads(out)[0]["name"] == "d"
    code, out, _ = run(
        "search", g.uri, "Doc", "--text", "red apple", "--where", "name != 'a'", "--json"
    )
    assert code == 0 and json.loads(out)[0]["name"] == "b"
    code, out, _ = run("search", g.uri, "Doc", "--near", "a", "--explain", "--json")
    assert code == 0 and json.loads(out)["coverage"][0]["exact_rows"] == 4
    code, out, _ = run("search", g.uri, "Doc", "--text", "sky")
    assert code == 0 and "2 rows @ main" in out


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((), "give --near KEY"),
        (("--near", "zz"), "no Doc with key 'zz'"),
        (("--vector-file", "/nonexistent/q.json"), "cannot read vector file"),
        (("--near", "a", "--k", "0"), "k must be between 1"),
        (("--near", "a", "--where", "name ="), "filter"),
    ],
)
def test_cli_bad_input_is_one_error_line(g, args, match):
    code, out, err = run("search", g.uri, "Doc", *args)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and match in err and err.count("\n") == 1


@pytest.mark.parametrize("content", ["not json", '{"a": 1}', "[1, 2]", '["x", 1, 2]'])
def test_cli_bad_vector_file(g, tmp_path: Path, content):
    q = tmp_path / "q.json"
    q.write_text(content)
    code, _, err = run("search", g.uri, "Doc", "--vector-file", str(q))
    assert code == 1 and err.startswith("error: ")


SEARCH_TOKEN = "search-read-token-1"  # 16+ characters: shorter ones are refused


@pytest.fixture(scope="module")
def client(g):
    config = ServerConfig(tokens={SEARCH_TOKEN: Scope.read})
    with TestClient(create_app(g, config)) as c:
        c.headers["Authorization"] = f"Bearer {SEARCH_TOKEN}"
        yield c


def test_http_search(client, g):
    r = client.post("/branches/main/search", json={"type": "Doc", "near": "a", "k": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["commit"] == g.head().id
    assert [row["name"] for row in body["rows"]] == ["b", "c"]
    assert body["rows"][0]["_distance"] == pytest.approx(
        g.search("Doc", near="a", k=1)["_distance"][0].as_py()
    )
    r = client.post(
        "/branches/main/search", json={"type": "Doc", "vector": [1, 0, 0], "text": "sky", "k": 3}
    )
    assert r.status_code == 200 and all("_rrf" in row for row in r.json()["rows"])
    r = client.post("/branches/main/search", json={"type": "Doc", "text": "x", "explain": True})
    assert r.json()["plan"]["mode"] == "text"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"type": "Doc", "vector": [1, 2]}, 400),
        ({"type": "Doc", "near": "zz"}, 422),  # KeyNotFoundError, as for writes
        ({"type": "Doc", "vector": [1, 0, 0], "k": 100_000}, 400),
        ({"type": "Nope", "vector": [1, 0, 0]}, 404),
        ({"type": "Doc", "text": "x" * 5000}, 422),
        ({"type": "Doc", "vector": [1, 0, 0], "bogus": 1}, 422),
    ],
)
def test_http_bad_input(client, body, status):
    r = client.post("/branches/main/search", json=body)
    assert r.status_code == status, r.text
    assert "error" in r.json() or "detail" in r.json()


def test_http_needs_a_token(g):
    with TestClient(create_app(g, ServerConfig(tokens={SEARCH_TOKEN: Scope.read}))) as c:
        r = c.post("/branches/main/search", json={"type": "Doc", "near": "a"})
    assert r.status_code == 401
