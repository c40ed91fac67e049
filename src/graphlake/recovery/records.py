"""Recovery records: one small object per publication in flight.

Before a write, merge, merge_many or optimize makes its first physical effect it creates
``_graphlake/recovery/<id>.json`` naming the branch and the ref entry it builds on; it
removes the record when it is done, whatever the outcome. The ref compare-and-swap
carries the record id into the new ref entry (``op``), so a record left behind by a crash
tells exactly whether the publication landed:

* the entry after the expected one exists and carries the record id: it was published;
  only the cleanup is missing ("completed");
* otherwise nothing became visible: the Lance versions and the commit object it made are
  unreferenced, and no later writer builds on them (every Lance version is claimed, and a
  writer that cannot claim the next version forks), so leaving them to `gc` is a complete
  roll-back ("rolled back").

A record also protects its publication's fresh, still unreferenced files from `gc`.
Whether its owner still runs: a record from this host names the process (pid and start
time); one from another host counts as abandoned once older than the lease.
"""

from __future__ import annotations

import builtins
import json
import os
import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphlake.catalog.commits import utc_now
from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphLakeError

RECOVERY_DIR = "_graphlake/recovery"
# A record from another host is taken as abandoned after this long (no heartbeat yet).
DEFAULT_LEASE = timedelta(hours=6)


def _process_start(pid: int) -> str:
    """The kernel's start time of `pid` (Linux), to tell a reused pid from the owner."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # Field 22 (starttime), counted after the parenthesised command name.
    return stat.rsplit(")", 1)[-1].split()[19]


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return not started or _process_start(pid) in ("", started)


@dataclass(frozen=True)
class Record:
    """A publication in flight: `op` on `branch`, building on ref entry `expected_seq`."""

    id: str
    op: str
    branch: str
    expected_seq: int
    expected_commit: str
    host: str
    pid: int
    process_start: str
    started: str

    @property
    def key(self) -> str:
        return f"{RECOVERY_DIR}/{self.id}.json"

    @property
    def started_at(self) -> datetime:
        return datetime.fromisoformat(self.started.replace("Z", "+00:00"))

    def owner_alive(self, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None) -> bool:
        """Whether the publishing process may still be running."""
        if self.host == socket.gethostname():
            return _alive(self.pid, self.process_start)
        return (now or datetime.now(UTC)) - self.started_at < lease

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Record:
        try:
            obj = json.loads(data)
            return cls(**{k: obj[k] for k in cls.__dataclass_fields__})
        except (ValueError, KeyError, TypeError) as exc:
            raise GraphLakeError(f"recovery record {where} is corrupt: {exc}") from exc


class RecordStore:
    """The recovery records of one graph."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def begin(self, op: str, branch: str, expected_seq: int, expected_commit: str) -> Record:
        from ulid import ULID  # python-ulid reads package metadata on import: only when needed

        pid = os.getpid()
        record = Record(
            id=str(ULID()).lower(),
            op=op,
            branch=branch,
            expected_seq=expected_seq,
            expected_commit=expected_commit,
            host=socket.gethostname(),
            pid=pid,
            process_start=_process_start(pid),
            started=utc_now(),
        )
        if not self._store.create(record.key, record.to_json()):
            raise GraphLakeError(f"recovery record {record.id} exists already")
        return record

    def finish(self, record: Record) -> None:
        self._store.delete(record.key)

    def list(self) -> builtins.list[Record]:
        """Every record present, oldest first (a corrupt one raises)."""
        records, corrupt = self.scan()
        if corrupt:
            raise GraphLakeError(f"recovery record {corrupt[0]} is corrupt")
        return records

    def scan(self) -> tuple[builtins.list[Record], builtins.list[str]]:
        """(readable records oldest first, keys of corrupt ones)."""
        records, corrupt = [], []
        for key in sorted(self._store.list(RECOVERY_DIR)):
            data = self._store.get(key)
            if data is None:  # finished meanwhile
                continue
            try:
                records.append(Record.from_json(data, key))
            except GraphLakeError:
                corrupt.append(key)
        return records, corrupt
