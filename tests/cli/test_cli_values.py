"""Values through the command line (issue 12, items 11-13): a Blob shown by
`graphlake show --json` and loaded back with `graphlake load` is unchanged; NaN under
`@range`, non-finite vectors and dates past year 9999 fail with one `error:` line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import graphlake as gl
from tests.cli.helpers import as_json, concurrently, error, ok, run, write_jsonl
from tests.conftest import state

SCHEMA = """
node M {
  k: String @key
  x: F64? @range(0..1)
  v: Vector(2)?
  d: Date?
  b: Blob?
}
"""
RAW = b"\x00\x01\x89PNG\xff"


def test_a_blob_shown_as_json_loads_back_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write() as w:
        w.insert("M", [{"k": "a", "x": 0.25, "v": [1.0, 2.0], "d": "2020-02-03", "b": RAW}])
    shown = as_json("show", root, "M")
    records = [{"type": "M", "data": {k: v for k, v in row.items() if k != "id"}} for row in shown]
    write_jsonl(tmp_path / "same.jsonl", records)
    write_jsonl(
        tmp_path / "copy.jsonl",
        [{"type": "M", "data": {**r["data"], "k": "copy"}} for r in records],
    )
    ok("load", root, tmp_path / "same.jsonl", "--mode", "merge")
    ok("load", root, tmp_path / "copy.jsonl")
    assert g.get("M", "a")["b"] == RAW and g.get("M", "copy")["b"] == RAW
    again = {r["k"]: r for r in as_json("show", root, "M")}
    assert {**again["copy"], "id": "a", "k": "a"} == again["a"] == shown[0]


def test_values_outside_a_type_fail_with_one_error_line(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    nan = tmp_path / "nan.jsonl"
    nan.write_text(json.dumps({"type": "M", "data": {"k": "n", "x": float("nan")}}) + "\n")
    inf = tmp_path / "inf.jsonl"
    inf.write_text(json.dumps({"type": "M", "data": {"k": "i", "v": [1, float("inf")]}}) + "\n")
    pq.write_table(
        pa.table({"k": ["far"], "d": pa.array([3_000_000], pa.date32())}), tmp_path / "far.parquet"
    )
    before = state(g)
    nan_run, inf_run, far_run = concurrently(
        lambda: run("load", root, nan),
        lambda: run("load", root, inf),
        lambda: run("load", root, tmp_path / "far.parquet", "--table", "M"),
    )
    assert "M: 'n': x=nan is outside @range" in error(nan_run)
    assert "M: 'i': v holds NaN or an infinity" in error(inf_run)
    assert "M: 'far': d=10183-09-21 is outside the supported Date range" in error(far_run)
    assert state(g) == before
