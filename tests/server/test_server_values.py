"""Values over HTTP (issue 12, items 11-13): a Blob read from the API and written back
through `/load` or `/mutations` is unchanged; NaN breaks `@range`, vectors refuse NaN
and infinities, dates past year 9999 are refused; all as typed 422s that change nothing.

A server of its own (a schema with a float range, a vector, dates and a blob).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import graphlake as gl
from tests.conftest import state
from tests.server.harness import WRITE_TOKEN, Server, rows, write_config

SCHEMA = """
node M {
  k: String @key
  x: F64? @range(0..1)
  v: Vector(2)?
  t: DateTime?
  b: Blob?
}
"""
RAW = b"\x89PNG\x00\xff\xfe"
NAN = float("nan")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[gl.Graph, httpx.Client]]:
    tmp = tmp_path_factory.mktemp("values")
    g = gl.Graph.init(tmp / "graph", SCHEMA)
    with g.write(message="seed") as w:
        w.insert(
            "M", [{"k": "a", "x": 0.5, "v": [1.0, 2.0], "t": "2024-01-02T03:04:05Z", "b": RAW}]
        )
    server = Server(
        tmp / "graph", tmp, ["--config", str(write_config(tmp / "server.toml", protected=[]))]
    ).start()
    try:
        with server.client(WRITE_TOKEN) as client:
            yield g, client
    finally:
        server.stop()


def _post_json(client: httpx.Client, path: str, body: Any) -> httpx.Response:
    # json.dumps writes NaN / Infinity literals, which Python's (and the server's) parser
    # reads back as floats; httpx's own encoder refuses them.
    return client.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})


def _mutate(client: httpx.Client, op: str, row: dict[str, Any]) -> httpx.Response:
    return _post_json(
        client,
        "/branches/main/mutations",
        {"message": "m", "operations": [{"op": op, "table": "M", "rows": [row]}]},
    )


def _load(client: httpx.Client, row: dict[str, Any], mode: str = "append") -> httpx.Response:
    line = json.dumps({"type": "M", "data": row}) + "\n"
    return client.post("/branches/main/load", params={"mode": mode}, content=line.encode())


def test_a_blob_read_from_the_api_writes_back_unchanged(world) -> None:
    g, client = world
    [row] = rows(client, "main", "M", where="k = 'a'")
    assert row["b"] == base64.b64encode(RAW).decode()
    data = {k: v for k, v in row.items() if k != "id"}
    r = _load(client, {**data, "k": "loaded"})
    assert r.status_code == 200, r.text
    r = _load(client, data, mode="merge")  # the same row, upserted through /load
    assert r.status_code == 200, r.text
    r = _mutate(client, "upsert", {**data, "k": "mutated"})
    assert r.status_code == 200, r.text
    r = _mutate(client, "update", data)
    assert r.status_code == 200, r.text
    by_key = {r["k"]: r for r in rows(client, "main", "M")}
    for key in ("a", "loaded", "mutated"):
        assert {**by_key[key], "id": "", "k": ""} == {**row, "id": "", "k": ""}, key
        assert g.get("M", key)["b"] == RAW, key


@pytest.mark.parametrize("how", ["mutation", "load"])
@pytest.mark.parametrize(
    ("row", "type_", "match"),
    [
        ({"x": NAN}, "ValueConstraintError", r"^M: 'n': x=nan is outside @range"),
        ({"v": [NAN, 1.0]}, "ValueConstraintError", r"^M: 'n': v holds NaN or an infinity"),
        ({"v": [1.0, float("inf")]}, "ValueConstraintError", r"v holds NaN or an infinity"),
        ({"t": 2**62}, "ValueConstraintError", r"^M: 'n': t=17036-.* is outside the supported"),
        ({"b": "not base64!"}, "TypeMismatchError", r"^M(\.b| 'n': b): expected Blob"),
    ],
)
def test_values_outside_a_type_are_422_and_change_nothing(
    world, how: str, row: dict[str, Any], type_: str, match: str
) -> None:
    g, client = world
    before = state(g)
    full = {"k": "n", **row}
    r = _mutate(client, "insert", full) if how == "mutation" else _load(client, full)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    message = error["message"]
    if how == "load":  # a value that fails conversion is named by the upload's line
        message = message.removeprefix("upload:1: ")
    assert error["type"] == type_ and _matches(match, message), error
    assert state(g) == before
    assert rows(client, "main", "M")  # a full read still works


def _matches(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def test_the_upload_is_named_not_the_temporary_file(world, tmp_path: Path) -> None:
    _, client = world
    r = client.post("/branches/main/load", content=b"[" * 1000 + b"]" * 1000 + b"\n")
    assert r.status_code == 400, r.text
    assert r.json()["error"]["message"].startswith("upload:1: "), r.text
