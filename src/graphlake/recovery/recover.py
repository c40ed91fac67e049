"""Recovery: settle the publications a crashed process left unfinished.

For each recovery record whose owner no longer runs (see `records`):

* **completed**: the ref entry after the one the record built on exists and carries the
  record's id, so the publication landed; only its cleanup was missing;
* **rolled back**: otherwise nothing became visible. Its Lance versions and commit object
  are unreferenced; no writer builds on them (the next version of that Lance branch is
  claimed, so the next writer forks), and `gc` reclaims them.

Either way the record is removed and the graph shows exactly the state before or after
the publication. Runs on `Graph.open` and as `graphlake recover`.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import GraphLakeError
from graphlake.recovery.records import Record, RecordStore

if TYPE_CHECKING:
    from graphlake.repo import Repo

_log = logging.getLogger(__name__)

COMPLETED = "completed"
ROLLED_BACK = "rolled_back"


@dataclass(frozen=True)
class Recovered:
    record: str
    op: str
    branch: str
    outcome: str  # COMPLETED | ROLLED_BACK
    commit: str | None  # the published commit, when completed


@dataclass
class RecoveryReport:
    recovered: list[Recovered] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)  # owners still running: left alone
    corrupt: list[str] = field(default_factory=list)  # unreadable records: left alone

    def to_dict(self) -> dict[str, Any]:
        return {
            "recovered": [asdict(r) for r in self.recovered],
            "in_flight": self.in_flight,
            "corrupt": self.corrupt,
        }


def settle(repo: Repo, record: Record) -> Recovered:
    """Decide whether `record`'s publication landed (it cannot any more: its owner is
    gone), and remove the record."""
    entry = repo.refs.entry(record.branch, record.expected_seq + 1)
    if entry is not None and entry.op == record.id:
        outcome, commit = COMPLETED, entry.commit
    else:
        outcome, commit = ROLLED_BACK, None
    RecordStore(repo.store).finish(record)
    return Recovered(record.id, record.op, record.branch, outcome, commit)


def recover(repo: Repo, *, force: bool = False) -> RecoveryReport:
    """Settle every record whose owner is gone (all of them with `force`)."""
    records, corrupt = RecordStore(repo.store).scan()
    report = RecoveryReport(corrupt=corrupt)
    for record in records:
        if not force and record.owner_alive():
            report.in_flight.append(record.id)
            continue
        try:
            report.recovered.append(settle(repo, record))
        except GraphLakeError as exc:  # e.g. a record naming an invalid branch
            _log.warning("cannot recover %s: %s", record.id, exc)
            report.corrupt.append(record.key)
    for r in report.recovered:
        _log.info("recovered %s %s on %r: %s", r.op, r.record, r.branch, r.outcome)
    return report
