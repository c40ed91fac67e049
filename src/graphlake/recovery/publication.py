"""One publication: its recovery record, its fault points, and the single ref CAS.

Writes, merges and optimize publish the same way::

    with Publication(graph, "write", branch, ref) as pub:   # record created
        ...table effects..., pub.effect() after each        # unreferenced Lance versions
        pub.publish(commit)                                 # commit object, then ref CAS
                                                            # record removed on the way out

Until the CAS, nothing is visible; the CAS entry carries the record id, so recovery can
tell a landed publication from one that never became visible (see `records`).
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import TYPE_CHECKING

from graphlake import faults
from graphlake.catalog.commits import Commit
from graphlake.catalog.permissions import check_branch
from graphlake.catalog.refs import RefEntry
from graphlake.recovery.records import Record, RecordStore

if TYPE_CHECKING:
    from graphlake.repo import Repo

_log = logging.getLogger(__name__)


class Publication:
    def __init__(
        self, repo: Repo, op: str, branch: str, ref: RefEntry, action: str | None = None
    ) -> None:
        assert op in faults.OPERATIONS, op
        assert ref.commit is not None
        self.repo, self.op, self.branch, self.ref = repo, op, branch, ref
        self.action = action or op.replace("_", "-")  # what the reflog entry says
        self._records = RecordStore(repo.store)
        self.record: Record | None = None

    def __enter__(self) -> Publication:
        assert self.ref.commit is not None
        check_branch(self.branch)  # before any effect: a refused change writes nothing
        self.record = self._records.begin(self.op, self.branch, self.ref.seq, self.ref.commit)
        faults.hit(f"{self.op}.after_record")
        return self

    def effect(self) -> None:
        """One table's effect is written (unreferenced until the CAS)."""
        faults.hit(f"{self.op}.after_table_effect")

    def publish(self, commit: Commit) -> RefEntry:
        """Store the commit object and move the ref to it (ConcurrentWriteError if the
        branch moved since `ref`)."""
        assert self.record is not None
        self.repo.commits.put(commit)
        faults.hit(f"{self.op}.before_ref_cas")
        entry = self.repo.refs.cas(
            self.branch, self.ref, commit.id, op=self.record.id, action=self.action
        )
        faults.hit(f"{self.op}.after_ref_cas")
        return entry

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        faults.hit(f"{self.op}.during_cleanup")
        if self.record is None:
            return
        try:
            self._records.finish(self.record)
        except Exception:  # the outcome stands; a left-over record is recovered later
            _log.warning("could not remove recovery record %s", self.record.id, exc_info=True)
