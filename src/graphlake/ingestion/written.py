"""How far a worker got *within* its current commit: rows written, not commits made.

A worker's branch head records its offset after each commit, but one commit may be a
whole slice (the default `commit_every` often is), so bars fed only by commits sit at 0
and then jump. While a commit's rows are being written, the worker counts the rows Lance
takes (`TableStore.on_rows_written`) and, at most every `INTERVAL_SECONDS`, stores its
estimated offset under `_graphlake/ingest/<run>/written-<phase>-w<i>.json`. The bars
show the larger of that and the committed offset. Advisory, like the heartbeat: a failed
write never fails the worker.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import TYPE_CHECKING

from graphlake.ingestion.plan import run_key

if TYPE_CHECKING:
    from graphlake.catalog.store import ObjectStore

INTERVAL_SECONDS = 0.5


def written_key(run_id: str, phase: str, worker: int) -> str:
    return run_key(run_id, f"written-{phase}-w{worker}.json")


def remove_reports(store: ObjectStore, run_id: str) -> None:
    """Drop a run's reports once it has finished: its done record says all there is."""
    prefix = run_key(run_id, "written-")
    for key in store.list(run_key(run_id, "")[:-1]):
        if key.startswith(prefix):
            with contextlib.suppress(Exception):  # advisory, like the reports themselves
                store.delete(key)


class WrittenReporter:
    """Feed `rows` with rows written; `batch` before each commit starts writing."""

    def __init__(self, store: ObjectStore, key: str, interval: float | None = None) -> None:
        self._store = store
        self._key = key
        self._interval = INTERVAL_SECONDS if interval is None else interval
        self._last = time.monotonic()
        self._offset = self._units = self._records = self._done = 0

    def batch(self, offset: int, units: int, records: int) -> None:
        """A commit of `units` (rows or lines) holding `records` rows starts at `offset`."""
        self._offset, self._units, self._records, self._done = offset, units, records, 0

    def rows(self, n: int) -> None:
        self._done += n
        now = time.monotonic()
        if now - self._last < self._interval or not self._records:
            return
        self._last = now
        share = min(self._done, self._records) / self._records
        at = self._offset + int(self._units * share)
        with contextlib.suppress(Exception):  # advisory: never fails the worker
            self._store.put(self._key, json.dumps({"offset": at}).encode("utf-8"))


def read_written(store: ObjectStore, key: str) -> int | None:
    """The offset a worker reported within its current commit, if any."""
    try:
        data = store.get(key)
        return None if data is None else int(json.loads(data)["offset"])
    except Exception:  # advisory: a torn or odd record shows nothing
        return None
