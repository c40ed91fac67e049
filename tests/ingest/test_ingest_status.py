"""Ingest status: runs newest first with their state, per-worker progress from the shard
branches' commit markers, the result once finished; and `graphlake ingest-status`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import IngestError, ingest, written
from graphlake.ingestion import attempt as A
from graphlake.ingestion import status as S
from graphlake.ingestion.plan import ALL, run_key
from graphlake.ingestion.worker import CRASH_AFTER_ENV
from tests.cli.helpers import error, parsed, run_all, stdout
from tests.ingest.helpers import SCHEMA, doc_records, write_jsonl, write_parquet_files


def _age_heartbeat(g: gl.Graph, run_id: str, seconds: float) -> None:
    """Make the run's attempt record look `seconds` old (as a killed orchestrator's)."""
    key = run_key(run_id, A.ATTEMPT_FILE)
    record = json.loads(g.repo.store.get(key))
    when = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)
    record.update(state=A.RUNNING, heartbeat=when.isoformat(), error_type=None, error_message=None)
    g.repo.store.put(key, json.dumps(record).encode())


def test_a_failed_run_shows_partial_progress_then_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    paths = write_parquet_files(tmp_path / "in", [3_000, 3_000])
    args = {"table": "Doc", "workers": 2, "commit_every": 1_000, "run_id": "st", "progress": False}
    monkeypatch.setenv(CRASH_AFTER_ENV, "1:1")  # worker 1 dies after its first commit
    with pytest.raises(IngestError):
        ingest(g, paths, **args)

    failed = S.run_status(g, "st")
    assert failed.state == S.FAILED and "IngestError" in (failed.error or "")
    assert (failed.format, failed.table, failed.into, failed.workers) == (
        "parquet",
        "Doc",
        "main",
        2,
    )
    assert [(w.worker, w.done, w.total, w.rows, w.state) for w in failed.progress] == [
        (0, 3_000, 3_000, 3_000, "done"),
        (1, 1_000, 3_000, 1_000, "partial"),
    ]
    assert (failed.done, failed.total, failed.unit, failed.result) == (4_000, 6_000, "rows", None)
    assert [f["rows"] for f in failed.files] == [3_000, 3_000]

    _age_heartbeat(g, "st", A.STALE_SECONDS + 5)
    assert S.run_status(g, "st").state == S.ABANDONED
    _age_heartbeat(g, "st", 1)
    assert S.run_status(g, "st").state == S.RUNNING
    g.repo.store.delete(run_key("st", A.ATTEMPT_FILE))
    assert S.run_status(g, "st").state == S.UNKNOWN

    monkeypatch.delenv(CRASH_AFTER_ENV)
    result = ingest(g, paths, **args)
    done = S.run_status(g, "st")
    assert done.state == S.FINISHED and done.error is None
    assert [(w.done, w.rows, w.state) for w in done.progress] == [
        (3_000, 3_000, "merged"),
        (3_000, 3_000, "merged"),
    ]
    assert done.result is not None and done.result["commit"] == result.commit
    assert done.result["rows"] == 6_000 and (done.done, done.total) == (6_000, 6_000)


def test_runs_are_listed_newest_first_and_a_mixed_run_is_one_phase(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    assert S.list_runs(g) == []
    paths = write_parquet_files(tmp_path / "in", [500])
    report = written.written_key("first", ALL, 0)  # as a slow worker leaves one
    g.repo.store.put(report, b'{"offset": 250}')
    ingest(g, paths, table="Doc", workers=1, run_id="first", progress=False)
    assert not g.repo.store.exists(report)  # a finished run keeps its done record, not reports
    records = [
        *doc_records(40),
        {"type": "Tag", "data": {"name": "t"}},
        *({"edge": "Tagged", "from": f"j{i:06d}", "to": "t"} for i in range(40)),
    ]
    jsonl = write_jsonl(tmp_path / "mixed.jsonl", records)
    ingest(g, jsonl, workers=2, commit_every=10, progress=False)

    runs = S.list_runs(g)
    assert [r.state for r in runs] == [S.FINISHED, S.FINISHED]
    assert runs[1].run_id == "first" and runs[0].run_id != "first"  # newest first
    mixed = S.run_status(g, runs[0].run_id)
    assert mixed.phases == ["all"] and mixed.unit == "lines"
    assert [(w.phase, w.worker, w.total) for w in mixed.progress] == [
        ("all", 0, 40),
        ("all", 1, 41),
    ]
    assert sum(w.rows for w in mixed.progress) == mixed.rows == 81
    assert (mixed.done, mixed.total) == (81, 81)
    assert runs[0].to_dict()["rows"] == 81


def test_unknown_and_invalid_run_ids(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with pytest.raises(S.IngestRunNotFoundError, match="no ingest run 'nope'"):
        S.run_status(g, "nope")
    with pytest.raises(gl.InvalidNameError):
        S.run_status(g, "../etc")


def test_the_heartbeat_keeps_a_long_attempt_fresh(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    store = g.repo.store
    with A.AttemptRecord(store, "beat", interval=0.05):
        first = A.load_attempt(store, "beat")
        assert first is not None and first.state == A.RUNNING
        deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=10)
        while A.load_attempt(store, "beat").heartbeat == first.heartbeat:
            assert dt.datetime.now(dt.UTC) < deadline
    with pytest.raises(ValueError), A.AttemptRecord(store, "boom", interval=60):
        raise ValueError("bad thing")
    failed = A.load_attempt(store, "boom")
    assert failed is not None and (failed.state, failed.error_type, failed.error_message) == (
        A.FAILED,
        "ValueError",
        "bad thing",
    )


def test_ingest_status_command(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    ingest(
        g,
        write_parquet_files(tmp_path / "in", [2_000]),
        table="Doc",
        workers=2,
        commit_every=500,
        run_id="cli-status",
        progress=False,
    )
    listed, one, human, human_list, missing = run_all(
        ("ingest-status", root, "--json"),
        ("ingest-status", root, "cli-status", "--json"),
        ("ingest-status", root, "cli-status"),
        ("ingest-status", root),
        ("ingest-status", root, "nope"),
    )
    runs = parsed(listed)["runs"]
    assert [(r["run_id"], r["state"], r["done"], r["total"]) for r in runs] == [
        ("cli-status", "finished", 2_000, 2_000)
    ]
    detail = parsed(one)
    assert detail["result"]["rows"] == 2_000 and len(detail["progress"]) == 2
    assert {w["state"] for w in detail["progress"]} == {"merged"}
    text = stdout(human)
    assert "cli-status" in text and "finished" in text and "ingest/cli-status/w1" in text
    assert "cli-status" in stdout(human_list)
    assert "no ingest run 'nope'" in error(missing, 1)
