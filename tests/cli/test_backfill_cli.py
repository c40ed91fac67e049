"""`graphlake backfill ROOT TYPE PROP FILE`: one commit, only that column, typed errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import graphlake as gl
from tests.cli.helpers import RECORDS, SCHEMA, error, parsed, run_all, write_jsonl


def test_backfill_from_jsonl_and_parquet_and_bad_input(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    g.load(RECORDS)
    g.create_branch("dev")
    head = g.head().id
    jsonl = write_jsonl(
        tmp_path / "ages.jsonl", [{"name": "Bob", "age": 41}, {"name": "Carol", "age": 7}]
    )
    parquet = tmp_path / "emb.parquet"
    pq.write_table(pa.table({"name": ["Carol"], "embedding": [[1.0, 2.0]]}), parquet)
    missing = write_jsonl(tmp_path / "missing.jsonl", [{"name": "Nobody", "age": 1}])
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    ages, emb, unknown, broken = run_all(
        ("backfill", root, "Person", "age", jsonl, "--json"),
        ("backfill", root, "Person", "embedding", parquet, "-b", "dev", "--json"),
        ("backfill", root, "Person", "age", missing, "-b", "dev"),
        ("backfill", root, "Person", "age", bad, "-b", "dev"),
    )
    out = parsed(ages)
    assert out["rows"] == 2 and out["changed"] and out["branch"] == "main"
    assert parsed(emb)["branch"] == "dev"
    assert "'Nobody'" in error(unknown) and "Parquet" in error(broken)
    g = gl.Graph.open(root)
    people = {r["name"]: r for r in g.nodes("Person").to_pylist()}
    assert (people["Alice"]["age"], people["Bob"]["age"], people["Carol"]["age"]) == (30, 41, 7)
    assert g.head().parents == (head,)
    assert g.get("Person", "Carol", branch="dev")["embedding"] == [1.0, 2.0]
    assert g.get("Person", "Bob", branch="dev")["age"] == 40
