"""Index maintenance in ingest: shards of a multi-worker run build no index segments for
their large commits (merge_many indexes what it adopts), a 1-worker run keeps its shard
indexed (it is fast-forwarded to), and `main` ends up with every row under its key index.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

import graphlake as gl
from graphlake.catalog.commits import TableState
from graphlake.ingest import ingest
from graphlake.storage import tables as T
from tests.ingest.helpers import SCHEMA, write_parquet_files

ROWS = 2 * T.INDEX_APPEND_THRESHOLD + 2  # two workers, each one commit above the threshold


def _unindexed(g: gl.Graph, state: TableState) -> int:
    return T._unindexed_fragments(g.tables.open(state))


def test_multi_worker_shards_skip_indexes_and_main_is_fully_indexed(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    paths = write_parquet_files(tmp_path / "in", [ROWS], row_group_size=10_000)
    result = ingest(g, [str(p) for p in paths], table="Doc", workers=2,
                    commit_every=ROWS, progress=False)
    head = g.head()
    assert len(head.parents) == 3 and result.merge.stats["Doc"].adopted_rows == ROWS
    for shard_head in head.parents[1:]:
        shard = g.commits.get(shard_head).tables["Doc"]
        ds = g.tables.open(shard)
        assert ds.count_rows() == ROWS // 2
        # Every fragment the shard wrote is outside every index segment.
        assert _unindexed(g, shard) == len(ds.get_fragments()) >= 1
    main = head.tables["Doc"]
    assert _unindexed(g, main) == 0
    assert g.tables.open(main).count_rows() == ROWS
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
    g.tables.index_large_appends = False
    unindexed = []
    for i in range(4):
        with g.write() as w:
            w.insert("Doc", pa.table({"key": [f"k{i}-{j}" for j in range(20)],
                                      "n": pa.array(range(20), pa.int64())}))
        unindexed.append(_unindexed(g, g.head().tables["Doc"]))
    assert unindexed == [1, 2, 0, 1]  # the third unindexed fragment triggers the refresh
    g.tables.index_large_appends = True
    with g.write() as w:
        w.insert("Doc", [{"key": "big", "n": 1}] + [{"key": f"b{j}", "n": j} for j in range(20)])
    assert _unindexed(g, g.head().tables["Doc"]) == 0
