"""End to end with the process engine: Parquet files, a folder, JSONL; exact rows, one
merge commit with workers+1 parents, zero-copy adoption, shard branches gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import IngestResult, ingest
from tests.ingest.helpers import (
    SCHEMA,
    doc_records,
    ingest_branches,
    keys,
    run_objects,
    write_jsonl,
    write_parquet_files,
)

SIZES = [7_000, 6_000, 7_000]  # 20k rows in 3 files


@pytest.fixture(scope="module")
def parquet_run(tmp_path_factory) -> tuple[gl.Graph, list[Path], str, IngestResult]:
    """3 Parquet files, 3 workers; main had one commit of its own before."""
    tmp = tmp_path_factory.mktemp("pq")
    g = gl.Graph.init(tmp / "g", SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Doc", [{"key": "seed", "n": -1}])
    base = g.head().id
    paths = write_parquet_files(tmp / "in", SIZES)
    result = ingest(
        g, [str(p) for p in paths], table="Doc", workers=3, commit_every=3_000, progress=False
    )
    return g, paths, base, result


def test_rows_are_exactly_the_input(parquet_run) -> None:
    g, _, _, result = parquet_run
    expected = ["seed"] + [f"p{i}-{j:06d}" for i, n in enumerate(SIZES) for j in range(n)]
    assert keys(g) == sorted(expected)
    assert result.rows == 20_000 and sum(result.rows_per_worker) == 20_000
    assert sorted(result.rows_per_worker) == [6_666, 6_667, 6_667]
    row = g.get("Doc", "p1-000123")
    assert (row["n"], row["text"]) == (123, "text p1-000123")


def test_one_merge_commit_with_workers_plus_one_parents(parquet_run) -> None:
    g, _, base, result = parquet_run
    head = g.head()
    assert result.commit == head.id and len(head.parents) == 4 and head.parents[0] == base
    for i, parent in enumerate(head.parents[1:]):
        meta = g.repo.commits.get(parent).meta
        assert (meta["ingest_run"], meta["worker"]) == (result.run_id, i)
        assert meta["offset"] == result.rows_per_worker[i]
    # batches of commit_every rows: 6,667 rows -> 3 commits on top of init and seed
    assert len(g.repo.history.log(head.parents[1])) == 3 + 2


def test_insert_only_shards_are_adopted_zero_copy(parquet_run) -> None:
    _, _, _, result = parquet_run
    stats = result.merge.stats["Doc"]
    assert (stats.route, stats.adopted_rows, stats.effects) == ("insertion_replay", 20_000, 0)
    assert set(result.merges) == {"all"}


def test_shard_branches_are_gone_and_the_run_is_recorded(parquet_run) -> None:
    g, _, _, result = parquet_run
    assert ingest_branches(g) == []
    run = f"_graphlake/ingest/{result.run_id}"
    assert {f"{run}/plan.json", f"{run}/done.json"} <= set(run_objects(g))
    fresh = gl.Graph.open(g.uri)  # trunk readable from a new handle, after branch deletion
    assert fresh.nodes("Doc").num_rows == 20_001
    assert fresh.sql("SELECT count(*) AS c FROM Doc WHERE n >= 0").column("c")[0].as_py() == 20_000


def test_rerunning_a_finished_run_returns_its_record(parquet_run) -> None:
    g, paths, _, result = parquet_run
    head = g.head().id
    again = ingest(g, [str(p) for p in paths], table="Doc", run_id=result.run_id, progress=False)
    assert again.already_complete and g.head().id == head
    assert (again.commit, again.rows, again.rows_per_worker) == (
        result.commit,
        result.rows,
        result.rows_per_worker,
    )
    assert again.merge.stats["Doc"].adopted_rows == 20_000
    with pytest.raises(gl.GraphLakeError, match="other arguments"):
        ingest(
            g, [str(p) for p in paths], table="Doc", run_id=result.run_id, workers=2, progress=False
        )


def test_a_folder_with_two_workers(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    write_parquet_files(tmp_path / "in", [5_000, 5_000, 5_000], row_group_size=700)
    (tmp_path / "in" / "_SUCCESS").write_text("")
    result = ingest(g, tmp_path / "in", table="Doc", workers=2, run_id="folder-run", progress=False)
    assert result.run_id == "folder-run" and result.rows_per_worker == [7_500, 7_500]
    assert keys(g) == sorted(f"p{i}-{j:06d}" for i in range(3) for j in range(5_000))
    assert len(g.head().parents) == 3 and ingest_branches(g) == []


def test_jsonl_with_four_workers(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    recs: list = doc_records(10_000)
    recs.insert(5_000, "   ")  # blank lines are skipped, but count as lines of a slice
    path = write_jsonl(tmp_path / "docs.jsonl", recs)
    result = ingest(g, path, workers=4, commit_every=1_500, progress=False)
    assert keys(g) == [f"j{i:06d}" for i in range(10_000)]
    assert result.rows == 10_000 and len(g.head().parents) == 5
    assert result.merge.stats["Doc"].adopted_rows == 10_000


def test_jsonl_with_nodes_and_edges_lands_as_one_merge(tmp_path: Path) -> None:
    """An edge's endpoints may be in another worker's slice: the final merge checks them."""
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    recs = [{"type": "Tag", "data": {"name": f"t{i}"}} for i in range(10)]
    recs += [{"edge": "Tagged", "from": f"j{i:06d}", "to": f"t{i % 10}"} for i in range(2_000)]
    recs += doc_records(2_000)  # the Docs come after the edges that point at them
    path = write_jsonl(tmp_path / "graph.jsonl", recs)
    result = ingest(g, path, workers=2, progress=False)
    assert list(result.merges) == ["all"] and len(g.head().parents) == 3
    assert (g.nodes("Doc").num_rows, g.nodes("Tag").num_rows, g.edges("Tagged").num_rows) == (
        2_000,
        10,
        2_000,
    )
    assert result.rows == 4_010
    assert ingest_branches(g) == []
    done = json.loads(g.repo.store.get(f"_graphlake/ingest/{result.run_id}/done.json"))
    assert done["commit"] == g.head().id


@pytest.mark.s3
def test_a_graph_on_s3(s3_server, tmp_path: Path) -> None:
    """Workers open the S3 graph themselves, with the caller's storage options."""
    g = gl.Graph.init(s3_server.fresh_uri(), SCHEMA, storage_options=s3_server.options)
    paths = write_parquet_files(tmp_path / "in", [2_000, 1_000])
    result = ingest(
        g, paths, table="Doc", workers=2, commit_every=1_000, run_id="on-s3", progress=False
    )
    assert result.rows_per_worker == [1_500, 1_500] and len(g.head().parents) == 3
    assert keys(g) == sorted(
        [f"p0-{i:06d}" for i in range(2_000)] + [f"p1-{i:06d}" for i in range(1_000)]
    )
    assert result.merge.stats["Doc"].adopted_rows == 3_000
    assert g.repo.store.get("_graphlake/ingest/on-s3/done.json") is not None
    assert ingest_branches(g) == []
