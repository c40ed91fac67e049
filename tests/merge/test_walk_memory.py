"""The memory-bounded walk (`delta.walk_candidates`): exact candidates, bounded peak memory.

The walk must find every key whose row differs between two states (a missed key is a
lost change in a merge), read every row exactly once, hold its peak memory to roughly
its budget whatever the table's size, and refuse with `MergeMemoryError` rather than
return a partial result when a single row does not fit.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import lance
import numpy as np
import pyarrow as pa
import pytest

from graphlake.errors import MergeMemoryError
from graphlake.merge import delta
from graphlake.merge.delta import walk_candidates

MiB = 1024 * 1024

# Every Arrow type a graphlake property can have (schema/arrow.py), nested lists included.
SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("n", pa.int64()),
        pa.field("flag", pa.bool_()),
        pa.field("score", pa.float64()),
        pa.field("tag", pa.string()),
        pa.field("born", pa.date32()),
        pa.field("at", pa.timestamp("us", tz="UTC")),
        pa.field("blob", pa.large_binary()),
        pa.field("emb", pa.list_(pa.float32(), 4)),
        pa.field("nums", pa.list_(pa.int64())),
        pa.field("words", pa.list_(pa.string())),
        pa.field("nested", pa.list_(pa.list_(pa.int64()))),
    ]
)


def row(i: int) -> dict[str, Any]:
    return {
        "id": f"k{i:05d}",
        "n": i,
        "flag": i % 2 == 0,
        "score": i / 7,
        "tag": f"t{i}",
        "born": dt.date(2000, 1, 1) + dt.timedelta(days=i),
        "at": dt.datetime(2020, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i),
        "blob": i.to_bytes(4, "little"),
        "emb": [float(i), 0.5, -1.0, 2.0],
        "nums": [i, i + 1],
        "words": ["a", f"w{i}"],
        "nested": [[i], []],
    }


# id -> the side's change to that row: each touches one cell only, and several are
# changes DuckDB's hash alone cannot see (NULL vs [] vs [NULL]; [x] vs [0, x]).
EDITS: dict[int, dict[str, Any]] = {
    1: {"emb": [1.0, 0.5, -1.0, 2.5]},  # one element of a vector
    2: {"emb": None},  # a vector becomes null
    3: {"nums": [3, 5]},  # one element of a list
    4: {"nums": []},  # a list empties
    5: {"nums": None},
    6: {"words": ["a", "w6", "x"]},
    7: {"n": None},  # a value becomes null ...
    8: {"tag": ""},
    9: {"blob": b""},
    10: {"born": dt.date(1999, 12, 31)},
    11: {"at": dt.datetime(2020, 1, 1, 0, 0, 12, 1, tzinfo=dt.UTC)},
    12: {"flag": None},
    13: {"score": 13 / 7 + 1e-12},
    14: {"nested": [[14], [None]]},  # an inner [] becomes [NULL]
    15: {"nested": [[], [14]]},
}
# ... and nulls, empty lists and zeros in the base that become values in the side
NULL_BASE: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {
    20: ({"n": None}, {"n": 0}),
    21: ({"nums": None}, {"nums": []}),
    22: ({"nums": []}, {"nums": [None]}),
    23: ({"nums": [7]}, {"nums": [0, 7]}),
    24: ({"emb": None}, {"emb": [0.0, 0.0, 0.0, 0.0]}),
    25: ({"tag": None}, {"tag": ""}),
    26: ({"blob": None}, {"blob": b""}),
    27: ({"nested": None}, {"nested": []}),
    28: ({"nested": [[]]}, {"nested": [None]}),
    29: ({"words": [None]}, {"words": [""]}),
}


def write(path: Path, rows: list[dict[str, Any]], rows_per_file: int) -> lance.LanceDataset:
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    return lance.write_dataset(table, str(path), max_rows_per_file=rows_per_file)


def brute_force(base: lance.LanceDataset, side: lance.LanceDataset) -> set[str]:
    """The keys whose rows differ, by comparing every row as Python objects."""
    a = {r["id"]: r for r in base.to_table().to_pylist()}
    b = {r["id"]: r for r in side.to_table().to_pylist()}
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def states(
    tmp_path: Path, n: int = 300, rows_per_file: int = 40
) -> tuple[lance.LanceDataset, lance.LanceDataset]:
    """A base and a side of `n` rows over several data files, with every kind of change:
    cell edits, nulls becoming values, inserts, and deletes (as deletion vectors in
    several files of both states, so reading by offset has to skip them)."""
    base_rows = [row(i) for i in range(n)]
    for i, (before, _) in NULL_BASE.items():
        base_rows[i].update(before)
    side_rows = [dict(r) for r in base_rows]
    for i, change in EDITS.items():
        side_rows[i].update(change)
    for i, (_, after) in NULL_BASE.items():
        side_rows[i].update(after)
    side_rows += [row(i) for i in range(n, n + 5)]  # inserts
    base = write(tmp_path / "base", base_rows, rows_per_file)
    side = write(tmp_path / "side", side_rows, rows_per_file)
    side.delete("id IN ('k00050', 'k00051', 'k00130', 'k00299')")  # deletes
    # The same rows gone from both: deleted on both sides is no change.
    base.delete("id IN ('k00200', 'k00201')")
    side.delete("id IN ('k00200', 'k00201')")
    return lance.dataset(str(tmp_path / "base")), lance.dataset(str(tmp_path / "side"))


def test_walk_finds_exactly_the_changed_ids(tmp_path: Path) -> None:
    base, side = states(tmp_path)
    assert len(side.get_fragments()) > 5
    expected = brute_force(base, side)
    assert {f"k{i:05d}" for i in [*EDITS, *NULL_BASE]} <= expected
    keys, scanned = walk_candidates(base, side, 64 * MiB, "Item (source)")
    assert keys == expected
    assert scanned == base.count_rows() + side.count_rows()


def test_walk_in_many_small_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages that start and end anywhere in a data file, across deletions, still read
    every row once: small pages give the same answer as one big page."""
    base, side = states(tmp_path)
    monkeypatch.setattr(delta, "_WALK_MAX_PAGE_ROWS", 7)
    keys, scanned = walk_candidates(base, side, 64 * MiB, "Item (source)")
    assert keys == brute_force(base, side)
    assert scanned == base.count_rows() + side.count_rows()


def test_pages_read_every_row_once(tmp_path: Path) -> None:
    base, side = states(tmp_path)
    for ds in (base, side):
        pages = delta._Pages(ds, ["id", "emb"], page_bytes=2_000, room=MiB, what="x")
        ids = [i for b in pages.reader() for i in b.column("id").to_pylist()]
        assert pages.finished
        assert ids == ds.to_table(columns=["id"]).column("id").to_pylist()


def test_walk_random_edits_match_brute_force(tmp_path: Path) -> None:
    rng = random.Random(7)
    base_rows = [row(i) for i in range(500)]
    side_rows = []
    for r in base_rows:
        r = dict(r)
        roll = rng.random()
        if roll < 0.05:
            continue  # delete
        if roll < 0.15:
            column = rng.choice([f.name for f in SCHEMA if f.name != "id"])
            r[column] = row(rng.randrange(10_000))[column] if rng.random() < 0.7 else None
        side_rows.append(r)
    side_rows += [row(i) for i in range(1000, 1010)]
    rng.shuffle(side_rows)  # the same keys in other files and positions are no change
    base = write(tmp_path / "base", base_rows, 64)
    side = write(tmp_path / "side", side_rows, 100)
    keys, _ = walk_candidates(base, side, 32 * MiB, "Item (source)")
    assert keys == brute_force(base, side)


def test_walk_of_identical_and_empty_states(tmp_path: Path) -> None:
    base = write(tmp_path / "base", [row(i) for i in range(50)], 20)
    empty = write(tmp_path / "empty", [], 20)
    assert walk_candidates(base, base, 16 * MiB, "x") == (set(), 100)
    keys, scanned = walk_candidates(empty, base, 16 * MiB, "x")
    assert keys == {f"k{i:05d}" for i in range(50)} and scanned == 50


def test_a_row_larger_than_the_budget_allows_is_refused(tmp_path: Path) -> None:
    rows = [row(i) for i in range(3)]
    rows[1]["blob"] = b"x" * (2 * MiB)
    base = write(tmp_path / "base", rows, 10)
    side = write(tmp_path / "side", rows[:2], 10)
    with pytest.raises(MergeMemoryError, match=r"Item \(target\).*one row takes"):
        walk_candidates(base, side, 16 * MiB, "Item (target)")
    # Where the budget leaves room for a row that size, the same walk goes through.
    assert walk_candidates(base, side, 256 * MiB, "Item (target)") == ({"k00002"}, 5)


# --- peak memory, in a fresh process -------------------------------------------------

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import lance
    from graphlake.merge.delta import walk_candidates

    base, side = lance.dataset(sys.argv[1]), lance.dataset(sys.argv[2])
    base.count_rows(), side.count_rows()
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes there, KiB here
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    keys, scanned = walk_candidates(base, side, int(sys.argv[3]), "Item (source)")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"keys": sorted(keys), "scanned": scanned,
                      "rise_mb": (after - before) * unit / 1e6}))
    """
)


# ru_maxrss survives exec: a child forked from this test process (large after building
# the data) would start with this process's peak as its own. A small launcher between
# them keeps the child's starting peak small, below its baseline before the walk.
LAUNCH = (
    "import subprocess, sys; "
    "sys.exit(subprocess.run([sys.executable, '-c', *sys.argv[1:]]).returncode)"
)


def vector_states(tmp_path: Path, n: int) -> tuple[str, str]:
    """`n` rows with a Vector(128) column in 128k-row files (as graphlake writes them); the
    side updates one vector, deletes one row and inserts one."""
    rng = np.random.default_rng(n)
    ids = pa.array([f"k{i:07d}" for i in range(n)])
    flat = rng.random(n * 128, dtype=np.float32)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(flat), 128)
    table = pa.table({"id": ids, "n": pa.array(np.arange(n)), "emb": emb})
    base = lance.write_dataset(table, str(tmp_path / "base"), max_rows_per_file=128 * 1024)
    flat[128 * 7] += 1.0  # one element of one vector
    table = table.set_column(2, "emb", pa.FixedSizeListArray.from_arrays(pa.array(flat), 128))
    side = lance.write_dataset(table, str(tmp_path / "side"), max_rows_per_file=128 * 1024)
    side.delete("id = 'k0000011'")
    side.insert(table.slice(0, 1).set_column(0, "id", pa.array(["new"])))
    return base.uri, side.uri


def test_walk_peak_memory_stays_near_its_budget(tmp_path: Path) -> None:
    """200k rows x Vector(128) is ~100 MB a state. At a 64 MiB budget the walk's peak
    rises ~115 MB (2 cores): the budget plus the scan's fixed cost (threads, buffers:
    ~70 MB, as much for 1k rows). DuckDB scanning Lance itself, as the walk once did,
    rose ~315 MB here, and ~470 MB at 400k rows."""
    base, side = vector_states(tmp_path, 200_000)
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCH, CHILD, base, side, str(64 * MiB)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["keys"] == ["k0000007", "k0000011", "new"]
    assert out["scanned"] == 400_000
    assert out["rise_mb"] < 200, out
