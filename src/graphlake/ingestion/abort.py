"""`abort_ingest`: remove a failed or abandoned run's shard branches and records.

A run is refused while it is running (its orchestrator's heartbeat is fresh), once it has
finished, and once any of its merges has landed on the target (rerunning with its run id
finishes such a run; aborting could not take the merged rows back). The shard branches'
Lance data is left for `graphlake gc`, like any deleted branch's.

An abort and a rerun of the same run may race. The abort writes `aborting.json` first
and reads the run's heartbeat after it; a rerun writes its heartbeat first and then
looks for `aborting.json` and the plan (`refuse_if_aborted`). So of the two, at least
one sees the other and stops: never does a rerun work on branches an abort is removing.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from graphlake.errors import BranchNotFoundError
from graphlake.ingestion import plan as P
from graphlake.ingestion import status as S
from graphlake.ingestion.attempt import STALE_SECONDS
from graphlake.ingestion.errors import IngestError

if TYPE_CHECKING:
    from graphlake.catalog.store import ObjectStore
    from graphlake.graph import Graph


class IngestRunActiveError(IngestError):
    """The run cannot be aborted: it is running, finished, or its merge has landed."""


def abort_ingest(graph: Graph, run_id: str) -> list[str]:
    """Delete the shard branches and the stored records of ingest run `run_id`; returns
    the branches removed. Raises `IngestRunNotFoundError` for an unknown run and
    `IngestRunActiveError` for a run that is running or whose merge has landed."""
    S.run_status(graph, run_id)  # validates the id; unknown run: NotFound
    marker = P.run_key(run_id, P.ABORT_FILE)
    graph.repo.store.put(marker, b"{}")
    try:
        plan = _abortable_plan(graph, run_id)
    except BaseException:
        with contextlib.suppress(Exception):
            graph.repo.store.delete(marker)
        raise
    removed = []
    for phase in plan.phases:
        for branch in plan.branches(phase):
            with contextlib.suppress(BranchNotFoundError):
                graph.delete_branch(branch)
                removed.append(branch)
    # The plan goes last but the marker: until then, the run is still listed and can be
    # aborted again; and a rerun that read the plan earlier still finds the marker.
    records = graph.repo.store.list(f"{P.RUNS_DIR}/{run_id}")
    plan_key = P.run_key(run_id, P.PLAN_FILE)
    for key in sorted(k for k in records if k not in (plan_key, marker)):
        graph.repo.store.delete(key)
    graph.repo.store.delete(plan_key)
    graph.repo.store.delete(marker)
    return removed


def refuse_if_aborted(store: ObjectStore, run_id: str) -> None:
    """Called by a run once its heartbeat is written: stop if an abort is under way or has
    removed the run meanwhile."""
    if store.exists(P.run_key(run_id, P.ABORT_FILE)) or P.load_plan(store, run_id) is None:
        raise IngestError(f"ingest run {run_id} is being aborted (or was); start a new run")


def _abortable_plan(graph: Graph, run_id: str) -> P.Plan:
    """The run's plan, read after the abort marker is written; raises if the run is
    running, finished or partly merged."""
    status = S.run_status(graph, run_id)
    if status.state == S.RUNNING:
        raise IngestRunActiveError(
            f"ingest run {run_id} is running (heartbeat {status.heartbeat}); stop its "
            f"process first, or wait {int(STALE_SECONDS)} s after it died"
        )
    if status.state == S.FINISHED:
        raise IngestRunActiveError(f"ingest run {run_id} has finished; there is nothing to abort")
    plan = P.load_plan(graph.repo.store, run_id)
    assert plan is not None  # run_status found it
    merged = [p for p in plan.phases if graph.repo.store.exists(P.run_key(run_id, P.phase_file(p)))]
    if merged:
        raise IngestRunActiveError(
            f"ingest run {run_id} has merged into {plan.into!r} already; rerun it with "
            f"run_id={run_id!r} to finish it"
        )
    return plan
