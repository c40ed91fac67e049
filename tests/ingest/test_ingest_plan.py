"""Splitting, slice reading and the worker function, in-process (no worker processes)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphlake as gl
from graphlake.ingestion import plan as P
from graphlake.ingestion.sources import InputFile, scan_jsonl, stat_file
from graphlake.ingestion.worker import WorkerTask, progress_of, read_parquet_range, run_slice
from tests.ingest.helpers import SCHEMA, doc_records, keys, write_jsonl, write_parquet_files


def _file(rows: int, i: int = 0) -> InputFile:
    return InputFile(f"/x/{i}", "parquet", 0, 0, rows)


@pytest.mark.parametrize(
    ("sizes", "workers"),
    [
        ([10_000], 3),
        ([7, 0, 5, 1], 4),
        ([3], 8),
        ([6_667, 6_667, 6_666], 2),
        ([1], 1),
    ],
)
def test_split_covers_every_row_once_in_equal_slices(sizes: list[int], workers: int) -> None:
    files = [_file(n, i) for i, n in enumerate(sizes)]
    slices = P.split(files, workers)
    total = sum(sizes)
    assert len(slices) == min(workers, total)
    lengths = [s.rows for s in slices]
    assert sum(lengths) == total and max(lengths) - min(lengths) <= 1 and min(lengths) >= 1
    covered = [
        (seg.file, r) for s in slices for seg in s.segments for r in range(seg.start, seg.stop)
    ]
    assert covered == [(i, r) for i, n in enumerate(sizes) for r in range(n)]


@pytest.mark.parametrize(
    ("start", "stop"),
    [(0, 10_000), (0, 1), (999, 1_001), (2_500, 7_777), (9_999, 10_000), (4_000, 4_000)],
)
def test_parquet_range_reads_exactly_those_rows(tmp_path: Path, start: int, stop: int) -> None:
    (path,) = write_parquet_files(tmp_path, [10_000], row_group_size=1_000)
    got = pa.Table.from_batches(
        list(read_parquet_range(str(path), start, stop)), schema=pq.read_schema(path)
    )
    assert got.column("n").to_pylist() == list(range(start, stop))


def test_jsonl_slices_start_on_line_starts(tmp_path: Path, monkeypatch) -> None:
    from graphlake.ingestion import sources

    monkeypatch.setattr(sources, "CHUNK_BYTES", 64)  # many chunks, lines across them
    recs: list = doc_records(50)
    recs[10] = ""  # a blank line counts as a line
    path = write_jsonl(tmp_path / "d.jsonl", recs)
    scan = scan_jsonl(path)
    assert (scan.lines, scan.has_nodes, scan.has_edges) == (50, True, False)
    files = [stat_file(path, "jsonl", scan.lines)]
    slices = P.with_byte_offsets(files, P.split(files, 4), {0: scan})
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    for s in slices:
        (seg,) = s.segments
        assert data[seg.byte_start : seg.byte_stop] == b"".join(lines[seg.start : seg.stop])


def test_plan_round_trips_and_is_stored_once(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    files = (_file(10),)
    plan = P.Plan(
        "r1", "parquet", "Doc", "main", g.head().id, 2, 5, files, tuple(P.split(files, 2))
    )
    assert P.Plan.from_json(plan.to_json()) == plan
    assert P.store_plan(g.repo.store, plan) == plan
    other = P.Plan(
        "r1", "parquet", "Doc", "main", g.head().id, 3, 5, files, tuple(P.split(files, 3))
    )
    assert P.store_plan(g.repo.store, other) == plan  # the first plan stays
    assert P.contradictions(
        plan, paths=["/x/0"], table="Doc", into="main", workers=3, commit_every=None
    ) == ["workers 3 != planned 2"]


def _task(g: gl.Graph, path: Path, rows: int, commit_every: int) -> WorkerTask:
    files = (stat_file(path, "parquet", rows),)
    (s,) = P.split(files, 1)
    g.create_branch("ingest/r/w0")
    return WorkerTask(
        root=g.repo.store.root_uri,
        storage_options=None,
        run_id="r",
        phase=P.ALL,
        worker=0,
        branch="ingest/r/w0",
        base=g.head().id,
        table="Doc",
        commit_every=commit_every,
        files=files,
        segments=s.segments,
    )


def test_worker_commits_batches_with_their_offset_and_resumes(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    (path,) = write_parquet_files(tmp_path / "in", [2_500])
    task = _task(g, path, 2_500, commit_every=1_000)
    # A first attempt that only got through one batch: its commit is exactly what the
    # worker would have written (data + marker in one commit).
    first = pq.read_table(path).slice(0, 1_000)
    with g.write(task.branch, "batch", meta=task.meta(1_000, 1_000)) as w:
        w.insert("Doc", first)
    assert progress_of(g, task) == (1_000, 1_000)
    report = run_slice(task)
    assert report.error is None, report.error
    assert (report.resumed_from, report.offset, report.rows, report.commits) == (
        1_000,
        2_500,
        2_500,
        2,
    )
    log = g.log(task.branch)
    assert [c.meta.get("offset") for c in log[:3]] == [2_500, 2_000, 1_000]
    assert keys(g, branch=task.branch) == [f"p0-{i:06d}" for i in range(2_500)]
    again = run_slice(task)  # finished: nothing to do
    assert (again.commits, again.offset, again.head) == (0, 2_500, log[0].id)


def test_worker_reports_typed_errors_as_data(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    (path,) = write_parquet_files(tmp_path / "in", [100])
    task = _task(g, path, 100, commit_every=1_000)
    with g.write("main") as w:  # the base moved away from the task's base: foreign head
        w.insert("Doc", [{"key": "x", "n": 1}])
    g.delete_branch(task.branch)
    g.create_branch(task.branch)
    report = run_slice(task)
    exc = report.error.rebuild()
    assert isinstance(exc, gl.GraphLakeError) and "moved outside ingest run" in str(exc)
    assert json.dumps(report.error.attrs) == "{}"
