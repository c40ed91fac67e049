"""`GET /ingest` and `GET /ingest/{run_id}` against a real server: runs newest first with
their state, per-worker progress, the result; read scope; 404 in the error shape."""

from __future__ import annotations

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphlake as gl
from graphlake.ingestion import ingest
from tests.server.harness import Server, unique


@pytest.fixture(scope="module")
def run_id(server: Server, tmp_path_factory: pytest.TempPathFactory) -> str:
    """One finished two-worker ingest into a branch of the shared server's graph."""
    folder = tmp_path_factory.mktemp("ingest")
    names = [f"ingested-{i:04d}" for i in range(1_200)]
    pq.write_table(
        pa.table({"name": names, "age": pa.array([30] * len(names), pa.int32())}),
        folder / "people.parquet",
        row_group_size=300,
    )
    g = gl.Graph.open(server.root)
    into = unique("t/ingest")
    g.create_branch(into, from_="main")
    run = unique("http-run")
    ingest(
        g,
        folder / "people.parquet",
        table="Person",
        workers=2,
        commit_every=300,
        into=into,
        run_id=run,
        progress=False,
    )
    return run


def test_list_and_show_an_ingest_run(reader: httpx.Client, run_id: str) -> None:
    r = reader.get("/ingest")
    assert r.status_code == 200, r.text
    runs = {x["run_id"]: x for x in r.json()["runs"]}
    listed = runs[run_id]
    assert (listed["state"], listed["format"], listed["table"], listed["workers"]) == (
        "finished",
        "parquet",
        "Person",
        2,
    )
    assert (listed["done"], listed["total"], listed["rows"], listed["unit"]) == (
        1_200,
        1_200,
        1_200,
        "rows",
    )
    created = [x["created"] for x in r.json()["runs"]]
    assert created == sorted(created, reverse=True)  # newest first

    r = reader.get(f"/ingest/{run_id}")
    assert r.status_code == 200, r.text
    run = r.json()
    assert run["run_id"] == run_id and run["commit_every"] == 300
    assert [
        (w["worker"], w["done"], w["total"], w["rows"], w["state"]) for w in run["progress"]
    ] == [(0, 600, 600, 600, "merged"), (1, 600, 600, 600, "merged")]
    assert run["files"][0]["rows"] == 1_200 and run["files"][0]["format"] == "parquet"
    assert run["result"]["rows"] == 1_200 and run["result"]["rows_per_worker"] == [600, 600]
    head = reader.get(f"/branches/{run['into']}/log", params={"limit": 1}).json()
    assert head["commits"][0]["id"] == run["result"]["commit"]


def test_unknown_run_is_a_404_in_the_error_shape(reader: httpx.Client) -> None:
    r = reader.get("/ingest/no-such-run")
    assert r.status_code == 404
    assert r.json() == {
        "error": {
            "type": "IngestRunNotFoundError",
            "message": "no ingest run 'no-such-run' in this graph",
        }
    }
    r = reader.get("/ingest/bad..name")
    assert r.status_code == 400 and r.json()["error"]["type"] == "InvalidNameError"


def test_ingest_status_needs_a_read_token(anon: httpx.Client) -> None:
    for path in ("/ingest", "/ingest/anything"):
        r = anon.get(path)
        assert r.status_code == 401 and set(r.json()["error"]) == {"type", "message"}


def test_openapi_documents_the_ingest_routes(anon: httpx.Client) -> None:
    paths = anon.get("/openapi.json").json()["paths"]
    assert {"/ingest", "/ingest/{run_id}"} <= set(paths)
