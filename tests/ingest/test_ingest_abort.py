"""`gl.abort_ingest` / `graphlake ingest --abort RUN_ID`: a failed run's shard branches
and records go; an unknown run, a running one and a finished one are refused (typed
errors, nothing changed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import IngestRunActiveError, ingest
from graphlake.ingestion.attempt import AttemptRecord
from graphlake.ingestion.status import IngestRunNotFoundError, list_runs
from tests.cli.helpers import error, parsed, run_all
from tests.ingest.helpers import SCHEMA, doc_records, ingest_branches, run_objects, write_jsonl


def test_a_failed_run_is_aborted_and_others_are_refused(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    trunk = g.head().id
    recs: list = doc_records(400)
    recs[300] = "{broken"
    path = write_jsonl(tmp_path / "docs.jsonl", recs)
    with pytest.raises(gl.LoadFormatError):
        ingest(g, path, workers=2, commit_every=100, run_id="bad", progress=False)
    assert ingest_branches(g) == ["ingest/bad/w0", "ingest/bad/w1"]
    before = (g.branches(), run_objects(g))

    # A rerun that finds an abort under way stops before any work (see abort.py).
    g.repo.store.put("_graphlake/ingest/bad/aborting.json", b"{}")
    with pytest.raises(gl.IngestError, match="being aborted"):
        ingest(g, path, workers=2, commit_every=100, run_id="bad", progress=False)
    g.repo.store.delete("_graphlake/ingest/bad/aborting.json")
    assert ingest_branches(g) == ["ingest/bad/w0", "ingest/bad/w1"]
    assert [k for k in run_objects(g) if not k.endswith("attempt.json")] == [
        k for k in before[1] if not k.endswith("attempt.json")
    ]

    with pytest.raises(IngestRunNotFoundError, match="no ingest run 'nope'"):
        gl.abort_ingest(g, "nope")
    with AttemptRecord(g.repo.store, "bad"), pytest.raises(IngestRunActiveError, match="running"):
        gl.abort_ingest(g, "bad")  # another process is resuming it right now
    g.repo.store.delete("_graphlake/ingest/bad/attempt.json")  # that attempt went away
    assert (g.branches(), run_objects(g)) == (
        before[0],
        [k for k in before[1] if not k.endswith("attempt.json")],
    )

    unknown, aborted, inputs_too, neither = run_all(
        ("ingest", g.uri, "--abort", "nope"),
        ("ingest", g.uri, "--abort", "bad", "--json"),
        ("ingest", g.uri, path, "--abort", "bad"),
        ("ingest", g.uri),
    )
    assert "no ingest run 'nope'" in error(unknown, 2)
    assert "not INPUT files" in error(inputs_too, 2)
    assert "needs INPUT files (or --abort RUN_ID)" in error(neither, 2)
    assert parsed(aborted) == {
        "run_id": "bad",
        "aborted": True,
        "branches_removed": ["ingest/bad/w0", "ingest/bad/w1"],
    }
    assert ingest_branches(g) == [] and run_objects(g) == [] and list_runs(g) == []
    assert g.head().id == trunk and g.fsck().ok
    with pytest.raises(IngestRunNotFoundError):
        gl.abort_ingest(g, "bad")

    ok = write_jsonl(tmp_path / "ok.jsonl", doc_records(10))
    (done,) = run_all(
        ("ingest", g.uri, ok, "--workers", "1", "--run-id", "ok", "--mode", "merge", "--json")
    )
    assert parsed(done)["rows"] == 10 and len(gl.Graph.open(g.uri).nodes("Doc")) == 10
    with pytest.raises(IngestRunActiveError, match="finished"):
        gl.abort_ingest(g, "ok")
