"""What an ingest run has done so far, read from what it stored (for `graphlake
ingest-status` and `GET /ingest`).

Nothing here is kept by a running process: a run's records under
`_graphlake/ingest/<run_id>/` (plan, merged phases, result, attempt) and its shard
branches' head commits, whose ingest marker holds each worker's offset, tell it all. So
status works from any process or machine that can open the graph, while the run is
going, after it finished, or after its orchestrator died.

Run states:

* `finished`: its result (`done.json`) is recorded;
* `running`: its orchestrator's heartbeat is fresh (see `attempt.py`);
* `failed`: the last attempt raised (the error is shown); rerun with the run id to resume;
* `abandoned`: the heartbeat stopped `STALE_SECONDS` ago without a result (the
  orchestrator was killed, or its machine died); rerun with the run id to resume;
* `unknown`: no attempt record (a run started by a graphlake without one).

Worker states, per phase: `merged` (its phase's merge is recorded), `done` (its branch
reached the end of its slice; the merge is pending), `partial` (some commits made),
`not_started` (its branch is at the phase's base or does not exist yet), `moved` (its
branch's head is not a commit of this run: someone else wrote to it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.catalog.names import validate_identifier
from graphlake.errors import GraphLakeError
from graphlake.ingestion import attempt as A
from graphlake.ingestion import plan as P
from graphlake.ingestion.errors import IngestError

if TYPE_CHECKING:
    from graphlake.graph import Graph

FINISHED = "finished"
RUNNING = "running"
FAILED = "failed"
ABANDONED = "abandoned"
UNKNOWN = "unknown"


class IngestRunNotFoundError(IngestError):
    """No ingest run with this id exists in the graph."""


@dataclass(frozen=True)
class WorkerStatus:
    worker: int
    phase: str
    branch: str
    done: int  # rows (JSONL: lines) of the slice done
    total: int  # the slice's rows (lines)
    rows: int  # records written
    state: str


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    state: str
    created: str
    into: str
    format: str
    table: str | None
    workers: int  # slices
    phases: list[str]
    done: int  # rows (JSONL: lines) done, summed over phases
    total: int
    rows: int  # records written
    unit: str  # "rows" or "lines"
    heartbeat: str | None = None
    error: str | None = None  # "<ErrorType>: message" of a failed attempt

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunStatus(RunSummary):
    base: str = ""
    commit_every: int = 0
    files: list[dict[str, Any]] = field(default_factory=list)  # path, format, rows
    progress: list[WorkerStatus] = field(default_factory=list)
    result: dict[str, Any] | None = None  # `IngestResult.to_dict()` once finished


def list_runs(graph: Graph) -> list[RunSummary]:
    """Every ingest run of the graph, newest first (runs with an unreadable plan are left
    out; `run_status` reports what is wrong with one)."""
    out: list[RunSummary] = []
    for folder in graph.repo.store.list_dirs(P.RUNS_DIR):
        run_id = folder.rsplit("/", 1)[-1]
        try:
            status = run_status(graph, run_id)
        except GraphLakeError:  # not a run id, no plan (yet), a corrupt plan
            continue
        out.append(_summary(status))
    out.sort(key=lambda s: (s.created, s.run_id), reverse=True)
    return out


def run_status(graph: Graph, run_id: str) -> RunStatus:
    """The run's plan, per-worker progress, state and (when finished) result."""
    validate_identifier(run_id, "ingest run id")
    store = graph.repo.store
    plan = P.load_plan(store, run_id)
    if plan is None:
        raise IngestRunNotFoundError(f"no ingest run {run_id!r} in this graph")
    done = _json(store.get(P.run_key(run_id, P.DONE_FILE)))
    attempt = A.load_attempt(store, run_id)
    progress = _progress(graph, plan, finished=done is not None)
    state, error = _state(done, attempt)
    return RunStatus(
        run_id=run_id,
        state=state,
        created=plan.created,
        into=plan.into,
        format=plan.format,
        table=plan.table,
        workers=len(plan.slices),
        phases=list(plan.phases),
        done=sum(w.done for w in progress),
        total=sum(w.total for w in progress),
        rows=sum(w.rows for w in progress),
        unit="rows" if plan.format == "parquet" else "lines",
        heartbeat=attempt.heartbeat if attempt else None,
        error=error,
        base=plan.base,
        commit_every=plan.commit_every,
        files=[{"path": f.path, "format": f.format, "rows": f.rows} for f in plan.files],
        progress=progress,
        result=done,
    )


def _summary(s: RunStatus) -> RunSummary:
    return RunSummary(**{f: getattr(s, f) for f in RunSummary.__dataclass_fields__})


def _state(done: dict[str, Any] | None, attempt: A.Attempt | None) -> tuple[str, str | None]:
    if done is not None:
        return FINISHED, None
    if attempt is None:
        return UNKNOWN, None
    if attempt.state == A.FAILED:
        return FAILED, f"{attempt.error_type}: {attempt.error_message}"
    if attempt.silent_for() > A.STALE_SECONDS:
        return ABANDONED, None
    return RUNNING, None


def _progress(graph: Graph, plan: P.Plan, *, finished: bool) -> list[WorkerStatus]:
    """Per phase and worker: merged phases from their records, others from the shard
    branches' head commits."""
    out: list[WorkerStatus] = []
    base = plan.base
    for phase in plan.phases:
        merged = _json(graph.repo.store.get(P.run_key(plan.run_id, P.phase_file(phase))))
        for i, s in enumerate(plan.slices):
            branch = plan.branch(phase, s.worker)
            if merged is not None or finished:
                rows = merged["rows"][i] if merged is not None else 0
                out.append(WorkerStatus(s.worker, phase, branch, s.rows, s.rows, rows, "merged"))
            else:
                out.append(_worker(graph, plan.run_id, phase, s, branch, base))
        if merged is None:
            break  # a later phase starts from this one's merge: not begun yet
        base = merged["commit"]
    done_phases = {w.phase for w in out}
    for phase in plan.phases:  # phases after an unmerged one have not begun
        if phase not in done_phases:
            out += [
                WorkerStatus(
                    s.worker, phase, plan.branch(phase, s.worker), 0, s.rows, 0, "not_started"
                )
                for s in plan.slices
            ]
    return out


def _worker(
    graph: Graph, run_id: str, phase: str, s: P.Slice, branch: str, base: str
) -> WorkerStatus:
    def status(done: int, rows: int, state: str) -> WorkerStatus:
        return WorkerStatus(s.worker, phase, branch, done, s.rows, rows, state)

    ref = graph.repo.refs.head(branch)
    if ref is None or ref.commit is None or ref.commit == base:
        return status(0, 0, "not_started")
    meta: Mapping[str, Any] = graph.repo.commits.get(ref.commit).meta
    if (
        meta.get("ingest_run") != run_id
        or meta.get("worker") != s.worker
        or meta.get("phase", P.ALL) != phase
    ):
        return status(0, 0, "moved")
    done = int(meta.get("offset", 0))
    rows = int(meta.get("rows", done))
    return status(done, rows, "done" if done >= s.rows else "partial")


def _json(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError as exc:
        raise IngestError(f"a stored ingest record is corrupt: {exc}") from None
