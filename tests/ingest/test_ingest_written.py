"""Progress moves while a shard writes, by rows written: a worker whose whole slice is
one commit still reports offsets between 0 and its size before that commit lands."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.store import ObjectStore
from graphlake.ingestion import written
from graphlake.ingestion.plan import ALL, Segment
from graphlake.ingestion.progress import IngestProgress
from graphlake.ingestion.sources import stat_file
from graphlake.ingestion.worker import WorkerTask, run_slice
from graphlake.storage import tables
from tests.ingest.helpers import SCHEMA, keys, write_parquet_files

ROWS = 20_000


def test_a_one_commit_slice_reports_rows_written_before_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    base = g.head().id
    g.create_branch("ingest/r/w0")
    [path] = write_parquet_files(tmp_path / "in", [ROWS])
    monkeypatch.setattr(written, "INTERVAL_SECONDS", 0.0)
    monkeypatch.setattr(tables, "REPORT_BATCH_ROWS", 2_000)
    reported: list[tuple[int, str]] = []  # (offset, branch head when it was reported)
    put = ObjectStore.put

    def spy(self: ObjectStore, key: str, data: bytes) -> None:
        if key == written.written_key("r", ALL, 0):
            offset = int(__import__("json").loads(data)["offset"])
            reported.append((offset, gl.Graph.open(g.uri).head("ingest/r/w0").id))
        put(self, key, data)

    monkeypatch.setattr(ObjectStore, "put", spy)
    task = WorkerTask(
        root=g.uri,
        storage_options=None,
        run_id="r",
        phase=ALL,
        worker=0,
        branch="ingest/r/w0",
        base=base,
        table="Doc",
        commit_every=ROWS,
        files=(stat_file(path, "parquet", ROWS),),
        segments=(Segment(0, 0, ROWS),),
    )
    report = run_slice(task)
    assert report.ok and report.commits == 1, report.error
    assert len(keys(g, branch="ingest/r/w0")) == ROWS
    # offsets strictly inside the slice, reported while the branch was still at its base
    inside = [offset for offset, head in reported if head == base and 0 < offset < ROWS]
    assert len(inside) >= 3 and inside == sorted(inside)

    # the bars show the reported offset while the branch head says 0
    bars = IngestProgress(g, "r2", base, ["ingest/r2/w0"], [ROWS], enabled=True)
    g.repo.store.put(written.written_key("r2", ALL, 0), b'{"offset": 12345}')
    g.create_branch("ingest/r2/w0", from_=base)
    with bars:
        bars.poll(force=True)
        assert bars._done == [12_345]
