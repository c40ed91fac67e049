"""Merge intents: a merge that lost the race for a busy branch asks its writers to wait.

A merge classifies against the target's head and publishes by compare-and-swap of the
target ref. Its attempt takes far longer than a one-row write, so against writers that
commit as fast as they can it loses every race and starves. Re-classifying only what the
target changed since the last attempt would shorten the retries but not close the
window: the classify-validate-apply-publish step still has to fit between two writes.
So the merge instead declares a short, leased *intent* on the target, and writers of
that branch wait before their next attempt while a live intent exists. Then the merge's
next attempt meets at most the writes already in flight, and lands.

Layout under the graph root::

    _graphlake/intents/<encode_name(branch)>/<expires_ms:015d>-<ulid>.json

The expiry (Unix time, ms) is part of the key, so a writer learns everything it needs
from one listing of its branch's folder, which usually finds nothing: about 50 us on a
local disk, one LIST request on S3. Each intent is a fresh key, made
by conditional create; renewing means creating the next key and deleting the old one,
never overwriting, so the same code works on local folders and S3.

Nothing ever waits forever:

- The lease (`LEASE_S`) bounds an intent. A merge renews it on each lost race and
  removes it when done, also when it raises; a killed merger's intent simply expires
  and is then ignored, and deleted by the next writer that sees it (or by `gc`). An
  expired intent is not an error anywhere, `fsck` included.
- A write waits at most `WRITER_MAX_WAIT_S` in all, whatever intents it meets, then
  publishes anyway (and may lose to the merge: it retries as before).

Expiry compares the merger's clock with the writer's: hosts whose clocks differ by more
than the lease only weaken the intent (writers see it as expired, or wait at most
`WRITER_MAX_WAIT_S`); they never block anyone for longer.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import random
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from graphlake.catalog.names import decode_name, encode_name, validate_branch_name
from graphlake.catalog.store import ObjectStore
from graphlake.errors import InvalidNameError

__all__ = ["INTENTS_DIR", "Intent", "MergeIntent", "MergeIntents"]

_log = logging.getLogger(__name__)

INTENTS_DIR = "_graphlake/intents"
LEASE_S = 5.0
WRITER_MAX_WAIT_S = 5.0
# Writers poll while they wait: short enough to follow a released intent quickly,
# jittered so waiting writers do not all start again at the same instant.
POLL_S = (0.01, 0.04)

_KEY_RE = re.compile(r"(\d{15})-([0-9A-Z]{26})\.json")


@dataclass(frozen=True)
class Intent:
    """One declared intent: its key and when its lease runs out (Unix seconds)."""

    key: str
    expires: float

    def live(self, now: float) -> bool:
        return now < self.expires


def _parse(key: str) -> Intent | None:
    match = _KEY_RE.fullmatch(key.rsplit("/", 1)[-1])
    if match is None:
        return None  # not ours (a stray upload): ignore it rather than fail writes
    return Intent(key, int(match.group(1)) / 1000)


class MergeIntents:
    """The intents of one graph, in its object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @staticmethod
    def _dir(branch: str) -> str:
        return f"{INTENTS_DIR}/{encode_name(validate_branch_name(branch))}"

    def list(self, branch: str) -> builtins.list[Intent]:
        """Every intent on `branch`, live or expired (one listing)."""
        found = (_parse(k) for k in self._store.list(self._dir(branch)))
        return sorted((i for i in found if i is not None), key=lambda i: i.expires)

    def live(self, branch: str) -> builtins.list[Intent]:
        """The live intents on `branch`; expired ones seen on the way are deleted."""
        now = time.time()
        intents = self.list(branch)
        for intent in intents:
            if not intent.live(now):
                self._drop(intent)
        return [i for i in intents if i.live(now)]

    def declare(self, branch: str, lease_s: float = LEASE_S) -> Intent:
        """Declare a new intent on `branch`, live for `lease_s` from now."""
        from ulid import ULID  # python-ulid reads package metadata on import: only when needed

        expires_ms = int((time.time() + lease_s) * 1000)
        key = f"{self._dir(branch)}/{expires_ms:015d}-{ULID()}.json"
        body = {"branch": branch, "host": socket.gethostname(), "pid": os.getpid()}
        # A fresh ULID makes the key unique: the create cannot meet an existing object.
        self._store.create(key, json.dumps(body, sort_keys=True).encode("utf-8"))
        return Intent(key, expires_ms / 1000)

    def release(self, intent: Intent) -> None:
        self._store.delete(intent.key)

    def _drop(self, intent: Intent) -> None:
        try:
            self._store.delete(intent.key)
        except Exception:  # someone else's leftover: the next reader tries again
            _log.warning("could not delete expired merge intent %s", intent.key, exc_info=True)

    def wait_for_merges(self, branch: str, budget_s: float) -> float:
        """Wait while a live intent is on `branch`, at most `budget_s`; returns the time
        waited (0 when there is none: one listing)."""
        started = time.monotonic()
        while True:
            intents = self.live(branch)
            waited = time.monotonic() - started
            if not intents or waited >= budget_s:
                return waited
            time.sleep(min(random.uniform(*POLL_S), budget_s - waited))

    def writer_gate(self, branch: str) -> Callable[[], None]:
        """A `before_attempt` hook for writers of `branch`: each call waits for merges,
        all calls together at most `WRITER_MAX_WAIT_S`."""
        left = [WRITER_MAX_WAIT_S]

        def gate() -> None:
            left[0] = max(0.0, left[0] - self.wait_for_merges(branch, left[0]))

        return gate

    def sweep(self) -> builtins.list[str]:
        """Delete the expired intents of every branch (for `gc`); returns their keys."""
        now = time.time()
        removed = []
        for folder in self._store.list_dirs(INTENTS_DIR):
            try:
                decode_name(folder.rsplit("/", 1)[-1])
            except InvalidNameError:
                continue
            for key in self._store.list(folder):
                intent = _parse(key)
                if intent is not None and not intent.live(now):
                    self._drop(intent)
                    removed.append(key)
        return removed


class MergeIntent:
    """The intent of one merge into `branch`: declared on its first lost race (a merge
    that wins at once costs nothing extra), renewed on each further one, released when
    the merge ends, however it ends::

        with MergeIntent(intents, "main") as intent:
            retry_while_head_moves(attempt, ..., on_lost=intent.claim)
    """

    def __init__(self, intents: MergeIntents, branch: str, lease_s: float = LEASE_S) -> None:
        self._intents, self._branch, self._lease_s = intents, branch, lease_s
        self.current: Intent | None = None

    def claim(self) -> None:
        """Declare the intent, or renew it: a new lease from now.

        Best effort: a merge that cannot declare its intent still retries as before.
        """
        old = self.current
        try:
            self.current = self._intents.declare(self._branch, self._lease_s)
            if old is not None:
                self._intents.release(old)
        except Exception:
            _log.warning("could not declare a merge intent on %r", self._branch, exc_info=True)

    def release(self) -> None:
        if self.current is not None:
            intent, self.current = self.current, None
            self._intents.release(intent)

    def __enter__(self) -> MergeIntent:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.release()
        except Exception:  # the merge's outcome stands; the lease ends the intent anyway
            _log.warning("could not release merge intent on %r", self._branch, exc_info=True)
