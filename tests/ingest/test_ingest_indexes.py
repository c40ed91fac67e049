"""Index maintenance in ingest: shards of a multi-worker run build no index segments for
their large commits (merge_many indexes what it adopts), a 1-worker run keeps its shard
indexed (it is fast-forwarded to), and `main` ends up with every row under its key index.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.catalog.commits import TableState
from graphlake.ingestion import ingest
from graphlake.storage import tables as T
from tests.ingest.helpers import SCHEMA, write_parquet_files

ROWS = 2 * T.INDEX_APPEND_THRESHOLD + 2  # two workers, each one commit above the threshold


def _unindexed(g: gl.Graph, state: TableState) -> int:
    return T._unindexed_fragments(g.repo.tables.open(state))


def test_multi_worker_shards_skip_indexes_and_main_is_fully_indexed(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    paths = write_parquet_files(tmp_path / "in", [ROWS], row_group_size=10_000)
    result = ingest(
        g, [str(p) for p in paths], table="Doc", workers=2, commit_every=ROWS, progress=False
    )
    head = g.head()
    assert len(head.parents) == 3 and result.merge.stats["Doc"].adopted_rows == ROWS
    for shard_head in head.parents[1:]:
        shard = g.repo.commits.get(shard_head).tables["Doc"]
        ds = g.repo.tables.open(shard)
        assert ds.count_rows() == ROWS // 2
        # Every fragment the shard wrote is outside every index segment.
        assert _unindexed(g, shard) == len(ds.get_fragments()) >= 1
    main = head.tables["Doc"]
    assert _unindexed(g, main) == 0
    assert g.repo.tables.open(main).count_rows() == ROWS
    assert g.get("Doc", f"p0-{ROWS - 1:06d}")["n"] == ROWS - 1


def test_one_worker_keeps_its_shard_indexed(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    paths = write_parquet_files(tmp_path / "in", [T.INDEX_APPEND_THRESHOLD], 10_000)
    result = ingest(g, [str(p) for p in paths], table="Doc", workers=1, progress=False)
    assert result.merge.outcome == "fast_forward"
    assert _unindexed(g, g.head().tables["Doc"]) == 0


def test_the_fragment_count_refresh_still_runs_without_large_append_indexing(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(T, "INDEX_APPEND_THRESHOLD", 10)
    monkeypatch.setattr(T, "INDEX_REFRESH_FRAGMENTS", 3)
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    g.repo.tables.index_large_appends = False
    unindexed = []
    for i in range(4):
        with g.write() as w:
            w.insert(
                "Doc",
                pa.table(
                    {"key": [f"k{i}-{j}" for j in range(20)], "n": pa.array(range(20), pa.int64())}
                ),
            )
        unindexed.append(_unindexed(g, g.head().tables["Doc"]))
    assert unindexed == [1, 2, 0, 1]  # the third unindexed fragment triggers the refresh
    g.repo.tables.index_large_appends = True
    with g.write() as w:
        w.insert("Doc", [{"key": "big", "n": 1}] + [{"key": f"b{j}", "n": j} for j in range(20)])
    assert _unindexed(g, g.head().tables["Doc"]) == 0


def test_unindexed_shards_resume_and_main_stays_exact_for_keyed_work(
    tmp_path: Path, monkeypatch
) -> None:
    """Two workers, large commits (no index segments on the shards), one worker killed
    after its first commit and resumed; then keyed reads, writes, a refused duplicate
    ingest and a merge on main must all see every row exactly once."""
    from graphlake.ingestion import IngestError
    from graphlake.ingestion.worker import CRASH_AFTER_ENV

    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    n = T.INDEX_APPEND_THRESHOLD + 3_000
    paths = [str(p) for p in write_parquet_files(tmp_path / "in", [n, n], 10_000)]
    args = {
        "table": "Doc",
        "workers": 2,
        "commit_every": T.INDEX_APPEND_THRESHOLD,
        "run_id": "big",
        "progress": False,
    }
    monkeypatch.setenv(CRASH_AFTER_ENV, "1:1")
    with pytest.raises(IngestError, match="did not finish"):
        ingest(g, paths, **args)
    crashed = g.head("ingest/big/w1")
    assert crashed.meta["offset"] == T.INDEX_APPEND_THRESHOLD
    assert _unindexed(g, crashed.tables["Doc"]) == len(
        g.repo.tables.open(crashed.tables["Doc"]).get_fragments()
    )
    monkeypatch.delenv(CRASH_AFTER_ENV)
    result = ingest(g, paths, **args)
    assert result.resumed and result.rows_per_worker == [n, n]
    main = g.head().tables["Doc"]
    assert g.repo.tables.open(main).count_rows() == 2 * n and _unindexed(g, main) == 0
    every = [f"p{f}-{i:06d}" for f in range(2) for i in range(n)]
    assert sorted(g.nodes("Doc", columns=["id"]).column("id").to_pylist()) == every
    probe = [
        "p0-000000",
        f"p0-{n - 1:06d}",
        "p1-000000",
        f"p1-{T.INDEX_APPEND_THRESHOLD:06d}",
        f"p1-{n - 1:06d}",
    ]
    for key in probe:
        assert g.get("Doc", key)["n"] == int(key[3:])
    with pytest.raises(gl.DuplicateKeyError), g.write() as w:
        w.insert("Doc", [{"key": f"p1-{n - 2:06d}", "n": 0}])
    # A second run over keys main holds already is refused; nothing is merged.
    again = [str(p) for p in write_parquet_files(tmp_path / "again", [10, 10])]
    before = g.head().id
    with pytest.raises(gl.DuplicateKeyError):
        ingest(g, again, table="Doc", workers=2, progress=False)
    assert g.head().id == before
    # Keyed writes on main and on a branch, then a three-way merge: lineage == walk.
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Doc", [{"key": "p1-000000", "n": -1}, {"key": f"p0-{n - 1:06d}", "n": -2}])
        w.delete("Doc", [f"p1-{T.INDEX_APPEND_THRESHOLD:06d}"])
        w.insert("Doc", [{"key": "dev-new", "n": 7}])
    with g.write() as w:
        w.update("Doc", [{"key": "p0-000000", "n": -3}])
        w.upsert("Doc", [{"key": "main-new", "n": 8}])
    for mode in ("verify", "on"):
        g.create_branch(f"into-{mode}")
        assert g.merge("dev", into=f"into-{mode}", lineage=mode).outcome == "merged"
    assert not _diff_rows(g)
    g.merge("dev", into="main")
    got = {
        k: (g.get("Doc", k) or {}).get("n")
        for k in [
            "p1-000000",
            f"p0-{n - 1:06d}",
            f"p1-{T.INDEX_APPEND_THRESHOLD:06d}",
            "dev-new",
            "p0-000000",
            "main-new",
        ]
    }
    assert got == {
        "p1-000000": -1,
        f"p0-{n - 1:06d}": -2,
        f"p1-{T.INDEX_APPEND_THRESHOLD:06d}": None,
        "dev-new": 7,
        "p0-000000": -3,
        "main-new": 8,
    }
    assert g.repo.tables.open(g.head().tables["Doc"]).count_rows() == 2 * n + 1


def _diff_rows(g: gl.Graph) -> bool:
    a = g.nodes("Doc", branch="into-verify").sort_by("id")
    b = g.nodes("Doc", branch="into-on").sort_by("id")
    return not a.equals(b)
