"""Running a plan: per phase, the shard branches, the workers, and one merge_many.

A phase that an earlier attempt merged is skipped (its `phase-<name>.json` record is
read back); workers whose branch already reached the end of their slice are not
started again.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphlake.errors import BranchExistsError
from graphlake.ingestion import plan as P
from graphlake.ingestion.engines import Engine
from graphlake.ingestion.errors import IngestError
from graphlake.ingestion.guard import MainGuardError
from graphlake.ingestion.progress import IngestProgress
from graphlake.ingestion.result import merge_result_from_dict
from graphlake.ingestion.worker import WorkerReport, WorkerTask, progress_of

if TYPE_CHECKING:
    from graphlake.graph import Graph
    from graphlake.merge.result import MergeResult


class Run:
    """One attempt at a plan: phases in order, each a set of workers and one merge."""

    def __init__(
        self,
        graph: Graph,
        plan: P.Plan,
        options: dict[str, str] | None,
        strict_disjoint: bool,
        progress: bool,
    ) -> None:
        self.graph = graph
        self.plan = plan
        self.options = options
        self.strict_disjoint = strict_disjoint
        self.progress = progress
        self.rows = [0] * len(plan.slices)
        self.merges: dict[str, MergeResult] = {}
        self.last_commit: str | None = None
        self.worker_seconds = 0.0
        self.merge_seconds = 0.0
        self._base = plan.base

    def phase(self, eng: Engine, phase: str) -> None:
        plan, graph = self.plan, self.graph
        marker = graph.repo.store.get(P.run_key(plan.run_id, P.phase_file(phase)))
        if marker is not None:  # merged by an earlier attempt
            recorded = json.loads(marker)
            self.merges[phase] = merge_result_from_dict(recorded["merge"])
            self.rows = [a + b for a, b in zip(self.rows, recorded["rows"], strict=True)]
            self._base = self.last_commit = recorded["commit"]
            return
        branches = plan.branches(phase)
        for branch in branches:
            _ensure_branch(graph, branch, self._base)
        tasks = [
            self._task(phase, s, branch) for s, branch in zip(plan.slices, branches, strict=True)
        ]
        t0 = time.perf_counter()
        reports = self._run_workers(eng, tasks)
        self.worker_seconds += time.perf_counter() - t0
        _raise_failures(plan.run_id, reports)
        phase_rows = [reports[s.worker].rows for s in plan.slices]
        t0 = time.perf_counter()
        label = f" ({phase})" if phase != P.ALL else ""
        with _status(self.progress, f"merging {len(branches)} shards into {plan.into}"):
            merge = graph.merge_many(
                branches,
                into=plan.into,
                strict_disjoint=self.strict_disjoint,
                message=f"ingest {plan.run_id}{label}: merge {len(branches)} shards",
            )
        self.merge_seconds += time.perf_counter() - t0
        self.merges[phase] = merge
        self.rows = [a + b for a, b in zip(self.rows, phase_rows, strict=True)]
        self._base = self.last_commit = merge.commit or graph.head(plan.into).id
        record = {"merge": merge.to_dict(), "rows": phase_rows, "commit": self._base}
        graph.repo.store.create(
            P.run_key(plan.run_id, P.phase_file(phase)), json.dumps(record).encode("utf-8")
        )

    def _task(self, phase: str, s: P.Slice, branch: str) -> WorkerTask:
        plan = self.plan
        return WorkerTask(
            root=self.graph.repo.store.root_uri,
            storage_options=self.options,
            run_id=plan.run_id,
            phase=phase,
            worker=s.worker,
            branch=branch,
            base=self._base,
            table=plan.table,
            commit_every=plan.commit_every,
            files=plan.files,
            segments=s.segments,
            # merge_many indexes what it adopts from two or more shards; one shard is
            # fast-forwarded to, so it must carry its own indexes.
            index_appends=len(plan.slices) == 1,
            mode=plan.mode,
        )

    def _run_workers(self, eng: Engine, tasks: list[WorkerTask]) -> dict[int, WorkerReport]:
        """Run the workers whose branch has not reached the end of its slice yet; the
        finished ones (from an earlier attempt) are reported without starting them."""
        plan = self.plan
        reports: dict[int, WorkerReport] = {}
        pending: list[WorkerTask] = []
        for task in tasks:
            offset, rows = progress_of(self.graph, task)
            if offset >= task.size:
                reports[task.worker] = WorkerReport(
                    task.worker,
                    task.phase,
                    task.branch,
                    task.size,
                    offset=offset,
                    rows=rows,
                    resumed_from=offset,
                    head=self.graph.head(task.branch).id,
                )
            else:
                pending.append(task)
        unit = "rows" if plan.format == "parquet" else "lines"
        bars = IngestProgress(
            self.graph,
            plan.run_id,
            self._base,
            [t.branch for t in tasks],
            [t.size for t in tasks],
            enabled=self.progress and _interactive(),
            label=unit,
            phase=tasks[0].phase,
        )
        with bars:
            for report in reports.values():
                bars.finished(report.worker, report.offset)
            if pending:
                eng.start(pending)
            while len(reports) < len(tasks):
                for report in eng.poll(timeout=0.5):
                    reports[report.worker] = report
                    bars.finished(report.worker, report.offset)
                bars.poll()
        return reports


def _ensure_branch(graph: Graph, branch: str, base: str) -> None:
    ref = graph.repo.refs.head(branch)
    if ref is not None and ref.commit is not None:
        return
    with contextlib.suppress(BranchExistsError):  # a concurrent attempt of this run
        graph.create_branch(branch, from_=base)


def _raise_failures(run_id: str, reports: dict[int, WorkerReport]) -> None:
    failed = [r for _, r in sorted(reports.items()) if not r.ok]
    if not failed:
        return
    first = failed[0]
    if first.error is None:  # returned without error but short of its slice: a bug
        exc: Exception = IngestError(
            f"ingest worker {first.worker} stopped at {first.offset}/{first.size} without an error"
        )
    else:
        exc = first.error.rebuild()
    if isinstance(exc, MainGuardError):  # no rerun can help until the script changes
        raise exc
    others = [f"w{r.worker}" for r in failed[1:]]
    exc.add_note(
        f"ingest run {run_id}: worker {first.worker} failed"
        + (f" (also failed: {', '.join(others)})" if others else "")
        + f"; nothing was merged. Fix the input and rerun with run_id={run_id!r} to resume."
    )
    raise exc


def _interactive() -> bool:
    from rich.console import Console  # only here: workers never import rich

    console = Console(stderr=True)
    return console.is_terminal or console.is_jupyter


@contextlib.contextmanager
def _status(enabled: bool, text: str) -> Iterator[None]:
    """A spinner on stderr while the merge runs (interactive sessions only)."""
    if not (enabled and _interactive()):
        yield
        return
    # on first use only: loads rich (start-up time)
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield
