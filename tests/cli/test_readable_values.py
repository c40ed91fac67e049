"""Answers a user can read (issue 23, item 7): float32 values, scalars and vectors, print
as the shortest decimal that round-trips them (`0.122`, not `0.12200000137090683`) in
`show` (table and `--json`), export CSV and JSONL, HTTP and the web UI."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

import graphlake as gl
from tests.cli.helpers import as_json, ok, run_all, stdout

SCHEMA = """
node M { k: String @key  f: F32?  d: F64?  v: Vector(3)? }
"""
NOISE = "0.12200000137090683"


def _graph(root: Path) -> gl.Graph:
    g = gl.Graph.init(root, SCHEMA)
    with g.write() as w:
        w.insert("M", [{"k": "a", "f": 0.122, "d": 0.1, "v": [0.122, 0.51, -3.3]}])
    return g


def test_float32_prints_its_shortest_decimal_everywhere(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = _graph(root)
    assert g.nodes("M").schema.field("f").type == pa.float32()  # stored as float32
    csv, jsonl = tmp_path / "m.csv", tmp_path / "m.jsonl"
    shown, table, *_ = run_all(
        ("show", root, "M", "--json"),
        ("show", root, "M"),
        ("export", root, "M", "-o", csv),
        ("export", root, "M", "-o", jsonl),
    )
    rows = json.loads(stdout(shown))
    assert rows[0]["f"] == 0.122 and rows[0]["v"] == [0.122, 0.51, -3.3] and rows[0]["d"] == 0.1
    assert "0.122" in stdout(table) and "0.12200" not in table.stdout
    assert NOISE not in csv.read_text() and '"[0.122, 0.51, -3.3]"' in csv.read_text()
    line = json.loads(jsonl.read_text().splitlines()[0])
    assert line["f"] == 0.122 and line["v"] == [0.122, 0.51, -3.3]
    assert g.get("M", "a")["f"] == 0.122
    assert as_json("sql", root, "SELECT f, v FROM M") == [{"f": 0.122, "v": [0.122, 0.51, -3.3]}]
    ok("show", root, "M")


def test_float32_over_http_and_in_the_ui(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from graphlake.server.app import create_app
    from graphlake.server.config import ServerConfig

    _graph(tmp_path / "g")
    app = create_app(tmp_path / "g", ServerConfig(no_auth=True))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page = client.get("/branches/main/tables/M").json()
        assert page["rows"][0]["f"] == 0.122 and page["rows"][0]["v"] == [0.122, 0.51, -3.3]
        sql = client.post("/branches/main/sql", json={"query": "SELECT f FROM M"})
        assert NOISE not in sql.text and "0.122" in sql.text
        for url in ("/ui/browse?ref=main&table=M", "/ui/node?ref=main&table=M&id=a"):
            html = client.get(url)
            assert html.status_code == 200 and "0.122" in html.text, url
            assert NOISE not in html.text, url
