"""The liveness record of an ingest run: which attempt is running it, and is it alive.

`_graphlake/ingest/<run>/attempt.json` is written when an attempt starts work (after its
plan is stored: bad input leaves nothing behind), refreshed every `HEARTBEAT_SECONDS` by
a background thread while the attempt runs, and marked failed, with the error, when the
attempt raises. An orchestrator that is killed writes nothing more: its heartbeat stops,
and after `STALE_SECONDS` `graphlake.ingestion.status` reports the run abandoned. The
record is advisory (status only): writing it never fails an ingest, and a rerun with the
same run id simply takes it over.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import threading
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from graphlake.ingestion.plan import run_key

if TYPE_CHECKING:
    from graphlake.catalog.store import ObjectStore

ATTEMPT_FILE = "attempt.json"
HEARTBEAT_SECONDS = 5.0
# Six missed heartbeats: a busy orchestrator still beats (the thread needs the GIL only
# for a moment), so a silence this long means it is gone.
STALE_SECONDS = 30.0
RUNNING = "running"
FAILED = "failed"


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class Attempt:
    """One attempt at a run, as recorded (times are ISO 8601, UTC)."""

    state: str  # RUNNING or FAILED
    started: str
    heartbeat: str
    host: str
    pid: int
    error_type: str | None = None
    error_message: str | None = None

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=1).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Attempt | None:
        """The record, or None if it is unreadable (it is advisory)."""
        try:
            obj = json.loads(data)
            return cls(
                state=str(obj["state"]),
                started=str(obj["started"]),
                heartbeat=str(obj["heartbeat"]),
                host=str(obj["host"]),
                pid=int(obj["pid"]),
                error_type=obj.get("error_type"),
                error_message=obj.get("error_message"),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def silent_for(self, at: dt.datetime | None = None) -> float:
        """Seconds since the last heartbeat (negative if the writer's clock runs ahead)."""
        return ((at or now()) - dt.datetime.fromisoformat(self.heartbeat)).total_seconds()


def load_attempt(store: ObjectStore, run_id: str) -> Attempt | None:
    data = store.get(run_key(run_id, ATTEMPT_FILE))
    return None if data is None else Attempt.from_json(data)


class AttemptRecord:
    """`with AttemptRecord(store, run_id):` records this attempt while the block runs."""

    def __init__(
        self, store: ObjectStore, run_id: str, interval: float = HEARTBEAT_SECONDS
    ) -> None:
        self._store = store
        self._key = run_key(run_id, ATTEMPT_FILE)
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        started = now().isoformat()
        self._attempt = Attempt(RUNNING, started, started, socket.gethostname(), os.getpid())

    def __enter__(self) -> AttemptRecord:
        self._write()
        self._thread = threading.Thread(target=self._beat, name="ingest-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if exc is not None:
            self._attempt = _replace(
                self._attempt,
                state=FAILED,
                heartbeat=now().isoformat(),
                error_type=type(exc).__name__,
                error_message=str(exc) or type(exc).__name__,
            )
            self._write()

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            self._attempt = _replace(self._attempt, heartbeat=now().isoformat())
            self._write()

    def _write(self) -> None:
        # Advisory: whatever the store raises (a transient S3 error) must not fail or
        # mask the ingest itself.
        with contextlib.suppress(Exception):
            self._store.put(self._key, self._attempt.to_json())


def _replace(attempt: Attempt, **changes: Any) -> Attempt:
    return Attempt(**{**asdict(attempt), **changes})
