"""The handshake that keeps `gc` from removing a commit a new ref is about to name, or a
reader is about to read.

A tag, a reset or a new branch may name any commit by id, also one nothing reaches (a
commit id from an old log, an expired reflog entry). A `gc` that read its roots before
that ref existed would remove the commit under it; the ref would then name nothing.
"gc never changes history" needs the two to meet somewhere, with no lock server and
the same code on local folders and S3. A reader is in the same position: it resolved a
commit (a branch that has moved on since, an old commit id) and takes a read lease on
it (`graphlake.catalog.leases`) after gc may have listed the leases. They meet in plain
objects:

    _graphlake/reclaim/pins/<expires_ms:015d>-<ulid>-<commit_id>.json
        a ref writer is about to name <commit_id> (live while a tag, reset or branch
        create runs; deleted when it ends, expiring by itself if its writer dies)
    _graphlake/reclaim/sweeps/<ulid>.json   {"commits": [...]}
        a running gc's notice: the commit objects it is about to remove
    _graphlake/leases/<expires_ms:015d>-<ulid>-<commit_id>.json
        a reader's lease (catalog/leases.py), which plays the part of a pin for as long
        as the reader holds it

The order on each side is what makes it safe (a store is read-your-writes consistent,
local and S3 alike):

- ref writer (`RefTargets.pinned`): create the pin; read the notices; check that the
  commit object still exists (`Sweeps.check_kept`); write the ref; delete the pin. A
  commit a notice names, or that is gone, is refused with `CommitNotFoundError` before
  any ref is written.
- reader (`Lease`): create the lease; read the notices and check the commit object
  (`Sweeps.check_kept`); only then open a table. A refused lease is deleted at once and
  raises `CommitNotFoundError` (`Snapshot.scan` resolves a branch revision once more).
- gc: read its roots (the live leases among them); publish a notice naming what it will
  remove; read the live pins, the live leases and the refs and tags again, and keep
  whatever they reach; remove; delete the notice.

Either the writer's pin (the reader's lease) exists before gc re-reads them (gc keeps
the commit), or the writer (reader) reads the notices after gc published its notice (it
refuses), or both (gc keeps it and the writer refuses: safe, and it can simply try
again). A notice is deleted only after the commits it names are gone, so a writer or
reader that finds no notice and still finds the commit object is safe too. A gc killed
between its notice and its end leaves the notice: the commits it names stay refused
(some of their Lance versions may be gone) until the next completed gc removes them and
the notice. None of this depends on gc's grace period or on clocks (beyond a lease's
expiry): it holds with `grace=0`.
"""

from __future__ import annotations

import builtins
import json
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from graphlake import faults
from graphlake.catalog.commits import CommitStore, is_commit_id
from graphlake.catalog.store import ObjectStore
from graphlake.errors import CommitNotFoundError

__all__ = ["PINS_DIR", "SWEEPS_DIR", "RefTargets", "SweepNotice", "Sweeps"]

PINS_DIR = "_graphlake/reclaim/pins"
SWEEPS_DIR = "_graphlake/reclaim/sweeps"
# A pin covers one tag, reset or branch create (milliseconds); if its writer dies the
# pin runs out after this long and gc then deletes it.
PIN_S = 600.0
_PIN_RE = re.compile(r"(\d{15})-([0-9A-Z]{26})-([0-9a-f]{40})\.json")


class RefTargets:
    """The ref writer's side: pin a commit while a ref naming it is written."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @contextmanager
    def pinned(self, commit_id: str) -> Iterator[None]:
        """Pin `commit_id`, and refuse it if a running gc is removing it (or removed it);
        write the ref inside the block. The pin is deleted when the block ends."""
        from ulid import ULID  # python-ulid reads package metadata on import: only when needed

        if not is_commit_id(commit_id):
            raise ValueError(f"not a commit id: {commit_id!r}")
        expires_ms = int((time.time() + PIN_S) * 1000)
        key = f"{PINS_DIR}/{expires_ms:015d}-{ULID()}-{commit_id}.json"
        self._store.create(key, b"{}")  # a fresh ULID: the create meets no object
        try:
            faults.hit("ref_target.after_pin")
            Sweeps(self._store).check_kept(commit_id)
            faults.hit("ref_target.before_ref")
            yield
        finally:
            self._store.delete(key)

    def live(self) -> set[str]:
        """The commits live pins name (what gc keeps)."""
        now_ms = time.time() * 1000
        out = set()
        for key in self._store.list(PINS_DIR):
            match = _PIN_RE.fullmatch(key.rsplit("/", 1)[-1])
            if match is not None and int(match.group(1)) > now_ms:
                out.add(match.group(3))
        return out

    def sweep(self) -> builtins.list[str]:
        """Delete expired pins (for gc); returns their keys."""
        now_ms = time.time() * 1000
        removed = []
        for key in self._store.list(PINS_DIR):
            match = _PIN_RE.fullmatch(key.rsplit("/", 1)[-1])
            if match is not None and int(match.group(1)) <= now_ms:
                self._store.delete(key)
                removed.append(key)
        return removed


class SweepNotice:
    """One running gc's notice (see `Sweeps.announce`)."""

    def __init__(self, store: ObjectStore, key: str) -> None:
        self._store = store
        self.key = key

    def withdraw(self) -> None:
        """Delete this notice once its gc completed, and any notice of an earlier gc
        (killed) whose commits are all gone now: it protects nothing any more."""
        for key in self._store.list(SWEEPS_DIR):
            if key >= self.key:
                continue
            named = Sweeps(self._store).named_by(key)
            if not any(self._store.exists(CommitStore.key(c)) for c in named):
                self._store.delete(key)
        self._store.delete(self.key)


class Sweeps:
    """gc's side: the notices of running (or killed) gc runs."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def announce(self, commits: Iterable[str]) -> SweepNotice:
        """Publish a notice naming the commit objects this gc is about to remove."""
        from ulid import ULID  # python-ulid reads package metadata on import: only when needed

        key = f"{SWEEPS_DIR}/{ULID()}.json"  # ULIDs sort by time: older notices first
        body = {"commits": sorted(commits), "time": time.time()}
        self._store.create(key, json.dumps(body, sort_keys=True).encode("utf-8"))
        return SweepNotice(self._store, key)

    def check_kept(self, commit_id: str) -> None:
        """Raise `CommitNotFoundError` if a notice names `commit_id` or its object is gone.

        The second half of a claim's handshake (a ref writer's pin, a reader's lease):
        call it only after the claim object exists."""
        if commit_id in self.condemned():
            raise CommitNotFoundError(
                f"commit {commit_id[:12]} is not reachable from any branch, tag or "
                "recent reflog entry, and a running gc is removing it"
            )
        # The object itself, not a cached copy: another process's gc may have run.
        if not self._store.exists(CommitStore.key(commit_id)):
            raise CommitNotFoundError(f"commit {commit_id[:12]} was removed by gc")

    def condemned(self) -> set[str]:
        """Every commit a notice names (one listing; usually there is none)."""
        out: set[str] = set()
        for key in self._store.list(SWEEPS_DIR):
            out |= self.named_by(key)
        return out

    def named_by(self, key: str) -> set[str]:
        """The commits notice `key` names (none once it is withdrawn)."""
        data = self._store.get(key)
        if data is None:
            return set()
        try:
            return {c for c in json.loads(data)["commits"] if is_commit_id(c)}
        except (ValueError, KeyError, TypeError):
            return set()  # not a notice of ours: names nothing
