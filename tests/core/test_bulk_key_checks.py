"""Bulk key checks stay exact on their fast paths: the range pre-filter of a scan
(`storage.lookup`), skipping the re-hash of keys known to be distinct, and the
ascending-order shortcut of the in-batch duplicate check (`write.resolve`)."""

from __future__ import annotations

import random
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import graphlake as gl
from graphlake.storage import lookup
from graphlake.storage.lookup import present_values, rows_where_in

SCHEMA = "node Doc { key: String @key  n: I64 }"


def _naive(table: pa.Table, column: str, values: list) -> list:
    wanted = pa.array([v for v in values if v is not None], type=table.schema.field(column).type)
    return table.filter(pc.is_in(table.column(column), value_set=wanted)).to_pylist()


@pytest.mark.parametrize("seed", range(6))
def test_scan_path_returns_exactly_the_matching_rows(
    tmp_path: Path, monkeypatch, seed: int
) -> None:
    monkeypatch.setattr(lookup, "PROBE_LIMIT", 8)  # every lookup below takes the scan path
    rng = random.Random(seed)
    keys = [f"k{rng.randrange(400):04d}" for _ in range(300)]
    table = pa.table(
        {
            "id": keys,
            "n": pa.array([rng.randrange(50) for _ in keys], pa.int64()),
            "f": [rng.choice([0.5, float("nan"), None]) for _ in keys],
        }
    )
    ds = lance.write_dataset(table, tmp_path / "t.lance", max_rows_per_file=64)
    for values in (
        [f"k{rng.randrange(400):04d}" for _ in range(40)],  # random: range covers all
        [f"k{i:04d}" for i in range(390, 420)],  # ascending, overlapping the top end
        [f"k{i:04d}" for i in range(500, 540)],  # ascending, past every stored key
        [f"k{i:04d}" for i in range(100, 112)] * 2 + [None],  # duplicates and a null
    ):
        got = rows_where_in(ds, "id", values)
        assert sorted(map(str, got.to_pylist())) == sorted(map(str, _naive(table, "id", values)))
        distinct = sorted({v for v in values if v is not None})
        assert present_values(ds, "id", distinct, distinct=True) == {
            r["id"] for r in _naive(table, "id", distinct)
        }
    ints = [rng.randrange(-5, 60) for _ in range(20)]
    assert sorted(rows_where_in(ds, "n", ints, ["id", "n"]).column("id").to_pylist()) == sorted(
        r["id"] for r in _naive(table, "n", ints)
    )
    floats = [0.5, float("nan"), 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]  # NaN matches NaN
    assert rows_where_in(ds, "f", floats, ["id"]).num_rows == len(_naive(table, "f", floats))


def test_bulk_insert_refuses_a_key_inside_the_branch_range(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Doc", [{"key": f"d{i:06d}", "n": i} for i in range(0, 60_000, 2)])
    # Ascending keys of which exactly one (d030000) is already on the branch.
    batch = pa.table(
        {
            "key": [f"d{i:06d}" for i in range(29_999, 59_999, 2)] + ["d030000"],
            "n": pa.array(range(15_001), pa.int64()),
        }
    )
    batch = batch.sort_by("key")
    with pytest.raises(gl.DuplicateKeyError, match="'d030000' already exists"), g.write() as w:
        w.insert("Doc", batch)
    fresh = pa.table(
        {
            "key": [f"d{i:06d}" for i in range(60_001, 90_001)],
            "n": pa.array(range(30_000), pa.int64()),
        }
    )
    with g.write() as w:  # ascending and past every key: accepted
        w.insert("Doc", fresh)
    assert g.nodes("Doc").num_rows == 60_000


@pytest.mark.parametrize(
    "keys",
    [
        ["a", "b", "b", "c"],  # sorted, with a duplicate: not strictly ascending
        ["c", "b", "a", "c"],  # unsorted, with a duplicate
    ],
)
def test_a_duplicate_key_in_one_write_is_refused(tmp_path: Path, keys: list[str]) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    rows = pa.table({"key": keys, "n": pa.array(range(len(keys)), pa.int64())})
    with pytest.raises(gl.DuplicateKeyError, match="more than once"), g.write() as w:
        w.insert("Doc", rows)
