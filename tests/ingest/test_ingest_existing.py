"""Keys that already exist on the target are found before any worker starts: the run
is refused at once, naming them, and leaves nothing behind (no plan, no shard branch)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import ingest
from tests.ingest.helpers import (
    SCHEMA,
    doc_records,
    ingest_branches,
    run_objects,
    write_jsonl,
    write_parquet_files,
)


def _seeded(root: Path, keys: list[str]) -> gl.Graph:
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Doc", [{"key": k, "n": 0} for k in keys])
        w.insert("Tag", [{"name": "t0"}])
    return g


def _unchanged(g: gl.Graph, head: str) -> None:
    assert g.head().id == head and ingest_branches(g) == [] and run_objects(g) == []


def test_parquet_keys_on_the_target_are_refused_before_the_workers(tmp_path: Path) -> None:
    g = _seeded(tmp_path / "g", ["p1-000007", "p0-000003", "other"])
    head = g.head().id
    paths = write_parquet_files(tmp_path / "in", [500, 500])
    with pytest.raises(gl.DuplicateKeyError) as info:
        ingest(g, paths, table="Doc", workers=2, run_id="again", progress=False)
    assert str(info.value).startswith(
        "Doc: 2 key(s) of the input exist on 'main' already: 'p0-000003', 'p1-000007';"
    )
    assert "--mode merge" in str(info.value)
    _unchanged(g, head)


def test_jsonl_keys_on_the_target_are_refused_before_the_workers(tmp_path: Path) -> None:
    g = _seeded(tmp_path / "g", [f"j{i:06d}" for i in range(0, 40, 5)])
    head = g.head().id
    # an edge without an id gets a fresh one: never an existing key
    recs = [*doc_records(40), {"edge": "Tagged", "from": "j000001", "to": "t0"}]
    path = write_jsonl(tmp_path / "docs.jsonl", recs)
    with pytest.raises(gl.DuplicateKeyError) as info:
        ingest(g, path, workers=2, progress=False)
    message = str(info.value)
    assert message.startswith(
        "Doc: 8 key(s) of the input exist on 'main' already: "
        "'j000000', 'j000005', 'j000010', 'j000015', 'j000020' "
        "(and 3 more);"
    )
    _unchanged(g, head)


def test_mode_merge_upserts_keys_the_target_holds(tmp_path: Path) -> None:
    g = _seeded(tmp_path / "g", ["p1-000007", "p0-000003", "other"])
    trunk = g.head().id
    paths = write_parquet_files(tmp_path / "in", [300, 200])
    result = ingest(g, paths, table="Doc", workers=2, run_id="m", mode="merge", progress=False)
    head = g.head()
    assert result.commit == head.id and head.parents[0] == trunk and len(head.parents) == 3
    assert g.nodes("Doc").num_rows == 501  # 500 input keys, 2 of them updated, + "other"
    row = g.get("Doc", "p0-000003")
    assert (row["n"], row["text"]) == (3, "text p0-000003")
    assert g.get("Doc", "other")["n"] == 0 and ingest_branches(g) == []

    again = ingest(
        g, paths, table="Doc", workers=2, run_id="m2", mode="merge", progress=False
    )  # idempotent: the same rows again
    assert g.nodes("Doc").num_rows == 501 and again.rows == 500
    with pytest.raises(gl.GraphLakeError, match="mode 'append' != planned 'merge'"):
        ingest(g, paths, table="Doc", run_id="m", progress=False)
    with pytest.raises(gl.DataError, match="unknown ingest mode 'upsert'"):
        ingest(g, paths, table="Doc", mode="upsert", progress=False)
