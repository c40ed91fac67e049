"""Read leases: a reader's claim on the commit it pinned, which `gc` honours.

A long reader (a training run's loader, a Ray job) resolves its revision once and then
reads that commit's Lance state for minutes or hours, while the branch it came from may
be written, merged, reset or deleted. `gc` keeps what live branches reach; a lease adds
the reader's commit to that root set for as long as the lease is live.

Layout under the graph root (plain objects, so local folders and S3 behave the same)::

    _graphlake/leases/<expires_ms:015d>-<ulid>-<commit_id>.json

Everything `gc` needs is in the key: one listing finds every live lease and the commit
it pins. Each lease object is a fresh key made by conditional create; renewing creates
the next key and then deletes the old one (never an overwrite), so a reader is covered
without a gap.

Nothing is held forever: a lease expires `lease_s` after its last renewal. A `Lease`
renews itself from a daemon thread every `lease_s / 3` until `release()` (or until its
process ends: a killed reader's lease simply runs out). Expired leases are ignored by
everyone and deleted by `gc`. A gc whose clock runs ahead of the reader's by more than
the lease sees the lease as expired: give readers on such hosts a longer lease.

Ordering, not time, closes the window between a reader resolving its revision and gc
listing the leases: a lease takes part in the handshake of `graphlake.catalog.reclaim`
as a ref writer's pin does. The reader (`Lease`) creates its lease object, then reads
gc's notices and checks that the commit object still exists, and only then opens a
table. gc reads the leases with its roots, publishes its notice of what it will remove,
then reads the live leases again and keeps what they reach. So either the lease existed
when gc re-read the leases (gc keeps the commit), or the reader read the notices after
gc published its notice (the lease is refused), or both; a reader that finds no notice
and finds the commit object is covered too, since a notice is withdrawn only after its
commits are gone. A refused lease is deleted at once and `Lease` raises
`CommitNotFoundError`: the reader must not open the commit's tables (some files may be
gone already). `Snapshot.scan`, where every reader takes its lease, then resolves a
revision that follows a branch once more (a branch head is never condemned) and raises
for one naming a commit or a tag. This holds for any grace period, 0 included.

The lease protects only while it is live: a reader must keep its process alive (the
daemon thread renews it). A process stopped for longer than `lease_s` (suspended, or a
renewal failing that long) lets the lease run out, and a gc may then remove the commit.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import re
import socket
import threading
import time
from dataclasses import dataclass

from graphlake import faults
from graphlake.catalog.commits import is_commit_id
from graphlake.catalog.reclaim import Sweeps
from graphlake.catalog.store import ObjectStore
from graphlake.errors import CommitNotFoundError

__all__ = ["LEASES_DIR", "Lease", "LeaseInfo", "ReadLeases"]

_log = logging.getLogger(__name__)

LEASES_DIR = "_graphlake/leases"
LEASE_S = 120.0
_KEY_RE = re.compile(r"(\d{15})-([0-9A-Z]{26})-([0-9a-f]{40})\.json")


@dataclass(frozen=True)
class LeaseInfo:
    """One lease object: its key, the commit it pins, when it runs out (Unix seconds)."""

    key: str
    commit: str
    expires: float

    def live(self, now: float) -> bool:
        return now < self.expires


def _parse(key: str) -> LeaseInfo | None:
    match = _KEY_RE.fullmatch(key.rsplit("/", 1)[-1])
    if match is None:
        return None  # not ours: ignored, never an error
    return LeaseInfo(key, match.group(3), int(match.group(1)) / 1000)


class ReadLeases:
    """The read leases of one graph, in its object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def list(self) -> builtins.list[LeaseInfo]:
        """Every lease, live or expired (one listing)."""
        found = (_parse(k) for k in self._store.list(LEASES_DIR))
        return sorted((i for i in found if i is not None), key=lambda i: i.expires)

    def live_commits(self) -> set[str]:
        """The commits that live leases pin (what `gc` adds to its roots)."""
        now = time.time()
        return {i.commit for i in self.list() if i.live(now)}

    def create(self, commit_id: str, lease_s: float) -> LeaseInfo:
        """A new lease object on `commit_id`, live for `lease_s` from now."""
        from ulid import ULID  # python-ulid reads package metadata on import: only when needed

        if not is_commit_id(commit_id):
            raise ValueError(f"not a commit id: {commit_id!r}")
        expires_ms = int((time.time() + lease_s) * 1000)
        key = f"{LEASES_DIR}/{expires_ms:015d}-{ULID()}-{commit_id}.json"
        body = {"commit": commit_id, "host": socket.gethostname(), "pid": os.getpid()}
        # A fresh ULID makes the key unique: the create cannot meet an existing object.
        self._store.create(key, json.dumps(body, sort_keys=True).encode("utf-8"))
        return LeaseInfo(key, commit_id, expires_ms / 1000)

    def delete(self, info: LeaseInfo) -> None:
        self._store.delete(info.key)

    def check_kept(self, commit_id: str) -> None:
        """`CommitNotFoundError` if a running gc is removing `commit_id` (or removed it):
        one listing of gc's notices and one existence check (`Sweeps.check_kept`)."""
        Sweeps(self._store).check_kept(commit_id)

    def take(self, commit_id: str, lease_s: float = LEASE_S) -> Lease:
        """A self-renewing lease on `commit_id` (see `Lease`)."""
        return Lease(self, commit_id, lease_s)

    def sweep(self) -> builtins.list[str]:
        """Delete expired leases (for `gc`); returns their keys."""
        now = time.time()
        removed = []
        for info in self.list():
            if not info.live(now):
                try:
                    self.delete(info)
                except Exception:  # someone else's leftover: the next gc tries again
                    _log.warning("could not delete expired read lease %s", info.key, exc_info=True)
                    continue
                removed.append(info.key)
        return removed


class Lease:
    """A live lease on one commit, renewed every `lease_s / 3` by a daemon thread until
    `release()`. Renewal is best effort: a failed renewal is logged and retried at the
    next tick (the previous lease object stays until a new one exists).

    Made only on a commit gc keeps: after creating the lease object it reads gc's
    notices and checks the commit object (see the module docstring); a commit a running
    gc is removing, or removed, raises `CommitNotFoundError`, with no lease left."""

    def __init__(self, leases: ReadLeases, commit_id: str, lease_s: float = LEASE_S) -> None:
        if not lease_s > 0:
            raise ValueError(f"a lease lasts more than 0 seconds, not {lease_s}")
        self.commit_id = commit_id
        self.lease_s = lease_s
        self._leases = leases
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.current: LeaseInfo | None = leases.create(commit_id, lease_s)
        try:
            faults.hit("read_lease.after_create")
            leases.check_kept(commit_id)
            faults.hit("read_lease.after_check")
        except BaseException:
            self.release()  # the lease object goes at once; no renewal starts
            raise
        self._thread = threading.Thread(
            target=self._run, name=f"graphlake-lease-{commit_id[:7]}", daemon=True
        )
        self._thread.start()

    @property
    def released(self) -> bool:
        return self._stop.is_set()

    def renew(self) -> None:
        """A new lease object from now; the old one is deleted once the new one exists.

        A lease that ran out before it was renewed (the process was stopped, renewals
        failed) protected nothing meanwhile: the commit is checked again, and if a gc is
        removing it or removed it, that is logged as an error (reads of it may fail)."""
        with self._lock:
            if self._stop.is_set():
                return
            old = self.current
            lapsed = old is not None and not old.live(time.time())
            self.current = self._leases.create(self.commit_id, self.lease_s)
            if old is not None:
                self._leases.delete(old)
        if lapsed:
            try:
                self._leases.check_kept(self.commit_id)
            except CommitNotFoundError as exc:
                _log.error(
                    "the read lease on %s ran out before its renewal: %s", self.commit_id, exc
                )

    def _run(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except Exception:
                _log.warning("could not renew the read lease on %s", self.commit_id, exc_info=True)

    def release(self) -> None:
        """Stop renewing and delete the lease object (idempotent)."""
        with self._lock:
            if self._stop.is_set():
                return
            self._stop.set()
            current, self.current = self.current, None
        if current is not None:
            try:
                self._leases.delete(current)
            except Exception:  # the lease runs out by itself
                _log.warning("could not release the read lease %s", current.key, exc_info=True)
