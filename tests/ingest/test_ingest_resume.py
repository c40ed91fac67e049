"""Crashes and failures: a killed worker process, a bad JSONL line; reruns resume."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.catalog.commits import Commit
from graphlake.ingestion import IngestError, ingest
from graphlake.ingestion.plan import Plan
from graphlake.ingestion.worker import CRASH_AFTER_ENV
from tests.ingest.helpers import (
    SCHEMA,
    doc_records,
    ingest_branches,
    keys,
    write_jsonl,
    write_parquet_files,
)


def _heads(g: gl.Graph, run_id: str, n: int) -> list[Commit]:
    return [g.head(f"ingest/{run_id}/w{i}") for i in range(n)]


def test_a_killed_worker_resumes_and_finished_workers_are_not_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    trunk = g.head().id
    paths = write_parquet_files(tmp_path / "in", [6_000, 6_000])
    args = {
        "table": "Doc",
        "workers": 3,
        "commit_every": 1_500,
        "run_id": "crash",
        "progress": False,
    }
    # Worker 1's process exits abruptly (os._exit) right after its first commit.
    monkeypatch.setenv(CRASH_AFTER_ENV, "1:1")
    with pytest.raises(IngestError, match=r"worker 1 .* did not finish") as info:
        ingest(g, paths, **args)
    assert "run_id='crash'" in str(info.value)
    assert g.head().id == trunk  # nothing merged
    before = _heads(g, "crash", 3)
    offsets = [c.meta["offset"] for c in before]
    assert offsets == [4_000, 1_500, 4_000]  # w0 and w2 finished, w1 got one batch in

    monkeypatch.delenv(CRASH_AFTER_ENV)
    result = ingest(g, paths, **args)
    assert result.resumed and result.rows_per_worker == [4_000, 4_000, 4_000]
    assert keys(g) == sorted(f"p{i}-{j:06d}" for i in range(2) for j in range(6_000))
    head = g.head()
    assert head.parents[0] == trunk and len(head.parents) == 4
    # Finished workers were not redone: their heads are the merge's parents unchanged.
    assert head.parents[1] == before[0].id and head.parents[3] == before[2].id
    # Worker 1 continued after its last commit: the crashed head is in its history.
    w1_log = [c.id for c in g.repo.history.log(head.parents[2])]
    assert before[1].id in w1_log
    assert [c.meta.get("offset") for c in g.repo.history.log(head.parents[2])[:3]] == [
        4_000,
        3_000,
        1_500,
    ]
    assert result.merge.stats["Doc"].adopted_rows == 12_000
    assert ingest_branches(g) == []


def test_a_bad_jsonl_line_fails_its_worker_then_the_fixed_file_resumes(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    trunk = g.head().id
    recs: list = doc_records(4_000)
    recs[3_000] = '{"type": "Doc", "data": {"key": "j003000", "n": 3000'  # line 3001
    path = write_jsonl(tmp_path / "docs.jsonl", recs)
    args = {"workers": 2, "commit_every": 500, "run_id": "badline", "progress": False}
    with pytest.raises(gl.LoadFormatError) as info:
        ingest(g, path, **args)
    assert (info.value.path, info.value.line) == (str(path), 3_001)
    assert f"{path}:3001: not valid JSON" in str(info.value)
    assert "rerun with run_id='badline'" in "\n".join(info.value.__notes__)
    assert g.head().id == trunk
    w0, w1 = _heads(g, "badline", 2)
    assert (w0.meta["offset"], w1.meta["offset"]) == (2_000, 1_000)

    # Fix the line (its length changes, the line count does not): the rerun resumes.
    recs[3_000] = {"type": "Doc", "data": {"key": "j003000", "n": 3000, "text": "fixed"}}
    write_jsonl(path, recs)
    result = ingest(g, path, **args)
    assert keys(g) == [f"j{i:06d}" for i in range(4_000)]
    assert g.get("Doc", "j003000")["text"] == "fixed"
    assert g.head().parents[1] == w0.id  # worker 0 was not redone
    assert result.rows_per_worker == [2_000, 2_000]


def test_a_fix_that_changes_the_line_count_is_refused(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    recs: list = doc_records(100)
    recs[60] = "{broken"
    path = write_jsonl(tmp_path / "docs.jsonl", recs)
    with pytest.raises(gl.LoadFormatError):
        ingest(g, path, workers=2, run_id="count", progress=False)
    write_jsonl(path, doc_records(101))
    with pytest.raises(IngestError, match="had 100 lines, now 101"):
        ingest(g, path, workers=2, run_id="count", progress=False)
    plan = Plan.from_json(g.repo.store.get("_graphlake/ingest/count/plan.json"))
    assert plan.rows == 100
