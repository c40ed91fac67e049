"""Progress of a running ingest: one bar per worker and one overall, on stderr.

The orchestrator reads each worker branch's head commit about twice a second and shows
the offset its ingest marker records, or, when larger, the offset the worker reported
while writing its current commit (`written.py`: rows written, so a bar moves during a
commit of a whole slice). Both come from the store, so the same code works for processes
and Ray and for workers on other machines.

rich is imported only when bars are shown: worker processes and non-interactive runs
never pay for it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from graphlake.errors import GraphLakeError
from graphlake.ingestion.written import read_written, written_key

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from graphlake.graph import Graph

POLL_SECONDS = 0.5


class IngestProgress:
    """Bars for `branches` (slice sizes `sizes`); a no-op when not `enabled`."""

    def __init__(
        self,
        graph: Graph,
        run_id: str,
        base: str,
        branches: Sequence[str],
        sizes: Sequence[int],
        *,
        enabled: bool,
        label: str = "rows",
        console: Console | None = None,
        phase: str = "all",
    ) -> None:
        self._graph = graph
        self._phase = phase
        self._run_id = run_id
        self._base = base
        self._branches = list(branches)
        self._sizes = list(sizes)
        self._enabled = enabled
        self._label = label
        self._console = console
        self._bar: Progress | None = None
        self._tasks: list[TaskID] = []
        self._overall: TaskID | None = None
        self._done = [0] * len(self._branches)
        self._finished: set[int] = set()
        self._last_poll = 0.0

    def __enter__(self) -> IngestProgress:
        if not self._enabled:
            return self
        # on first use only: loads rich (start-up time)
        from rich.console import Console

        # on first use only: loads rich (start-up time)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(self._label),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self._console or Console(stderr=True),
        )
        self._bar.__enter__()
        self._tasks = [
            self._bar.add_task(f"w{i}", total=size) for i, size in enumerate(self._sizes)
        ]
        self._overall = self._bar.add_task("total", total=sum(self._sizes))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
            self._bar = None

    def poll(self, force: bool = False) -> None:
        """Read the worker branches' offsets (at most every POLL_SECONDS)."""
        if self._bar is None:
            return
        now = time.monotonic()
        if not force and now - self._last_poll < POLL_SECONDS:
            return
        self._last_poll = now
        for i, branch in enumerate(self._branches):
            if i not in self._finished:
                committed = self._offset(branch)
                writing = read_written(
                    self._graph.repo.store, written_key(self._run_id, self._phase, i)
                )
                self._show(i, max(committed or 0, writing or 0) if committed is not None else None)

    def finished(self, worker: int, offset: int) -> None:
        """A worker is done (or failed) at `offset`; stop polling its branch."""
        self._finished.add(worker)
        self._show(worker, offset)

    def _offset(self, branch: str) -> int | None:
        try:
            ref = self._graph.repo.refs.head(branch)
            if ref is None or ref.commit is None or ref.commit == self._base:
                return 0
            meta = self._graph.repo.commits.get(ref.commit).meta
        except GraphLakeError:
            return None  # a progress bar never fails the ingest
        if meta.get("ingest_run") != self._run_id:
            return None
        return int(meta.get("offset", 0))

    def _show(self, worker: int, offset: int | None) -> None:
        if self._bar is None or offset is None or worker >= len(self._tasks):
            return
        self._done[worker] = offset
        self._bar.update(self._tasks[worker], completed=offset)
        assert self._overall is not None
        self._bar.update(self._overall, completed=sum(self._done))
