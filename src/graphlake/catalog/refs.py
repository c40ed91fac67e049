"""Branch refs: an append-only sequence of entries per branch, moved by compare-and-swap.

Layout under the graph root::

    _graphlake/refs/<encode_name(branch)>/00000000000000000001.json   entry seq 1
    _graphlake/refs/<encode_name(branch)>/00000000000000000002.json   entry seq 2 ...
    _graphlake/refs/<encode_name(branch)>/HEAD.hint                   latest seq known

An entry is never changed. Moving a branch from entry N means *creating* entry N+1 with a
conditional create: of several writers starting from N exactly one succeeds, so that create
is the compare-and-swap (it works on local folders and on S3 alike; neither needs an
overwrite-if-ETag). `commit=None` marks a tombstone (branch deleted); re-creating the branch
continues the same sequence with a new `incarnation`.

`HEAD.hint` is only a shortcut for finding the newest entry: it is overwritten after each
successful write, so it can lag (a writer died, or two hint writes landed out of order) but
it never names an entry that does not exist. `head()` starts at the hint and probes forward,
so finding the head costs O(1) requests in the usual case, never a listing of all entries.

A `RefStore` also remembers the newest entry it has seen of each branch (read or written).
Entries are immutable, never removed, and dense, so the head is at or after a seq once
seen: `head()` then starts its probe there, and when nothing follows (no entry seq+1,
one existence check: a `stat` on a local root, a HEAD request on S3) the remembered entry
is the head, without reading the hint or the entry again. A write by another process
creates seq+1 first, so the next `head()` in every process sees it.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from graphlake.catalog.authors import current_author
from graphlake.catalog.commits import is_commit_id, utc_now
from graphlake.catalog.names import decode_name, encode_name, validate_branch_name
from graphlake.catalog.permissions import check_branch
from graphlake.catalog.store import ObjectStore
from graphlake.errors import (
    BranchExistsError,
    BranchNotFoundError,
    ConcurrentWriteError,
    GraphLakeError,
    InvalidNameError,
)

__all__ = ["RefEntry", "RefStore"]

_log = logging.getLogger(__name__)

REFS_DIR = "_graphlake/refs"
_HINT = "HEAD.hint"
_ENTRY_RE = re.compile(r"(\d{20})\.json")
# How often create()/delete() without an expected entry re-read the head after losing a
# race before giving up. Each retry means another writer made progress.
_MAX_RETRIES = 10


@dataclass(frozen=True)
class RefEntry:
    """One position of a branch: `commit` (None = tombstone) as entry number `seq`.

    `incarnation` identifies one life of the branch, from create to delete; it is the
    owner token of the Lance branches that life writes to (see `TableState.owner`).
    """

    seq: int
    commit: str | None
    incarnation: str
    time: str
    # The recovery record of the publication that wrote this entry (see recovery/).
    op: str | None = None
    # The reflog (catalog/reflog.py): who moved the branch, and by what operation
    # (write, merge, revert, cherry-pick, reset, create, delete, ...). None in entries
    # written before the reflog recorded them.
    author: str | None = None
    action: str | None = None

    @property
    def is_tombstone(self) -> bool:
        return self.commit is None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "commit": self.commit,
            "incarnation": self.incarnation,
            "time": self.time,
        }
        if self.op is not None:
            out["op"] = self.op
        if self.author is not None:
            out["author"] = self.author
        if self.action is not None:
            out["action"] = self.action
        return out


def _entry_bytes(entry: RefEntry) -> bytes:
    # A fresh nonce per write makes our own bytes unique, so finding them at the key after
    # an ambiguous create (e.g. a retried request whose first attempt landed) proves we won.
    from ulid import ULID  # python-ulid reads package metadata on import: only when needed

    body = {**entry.to_dict(), "nonce": str(ULID())}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _parse_entry(data: bytes, where: str) -> RefEntry:
    try:
        obj = json.loads(data)
        entry = RefEntry(
            seq=int(obj["seq"]),
            commit=obj["commit"],
            incarnation=str(obj["incarnation"]),
            time=str(obj["time"]),
            op=obj.get("op"),
            author=obj.get("author"),
            action=obj.get("action"),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise GraphLakeError(f"ref entry {where} is corrupt: {exc}") from exc
    if entry.commit is not None and not is_commit_id(entry.commit):
        raise GraphLakeError(f"ref entry {where} is corrupt: bad commit {entry.commit!r}")
    return entry


@functools.lru_cache(maxsize=1024)
def _branch_dir(branch: str) -> str:
    """The folder of a branch's entries (validated once per name: an invalid name
    raises and is not cached)."""
    return f"{REFS_DIR}/{encode_name(validate_branch_name(branch))}"


def _check_commit_id(commit_id: str) -> str:
    if not is_commit_id(commit_id):
        raise ValueError(f"{commit_id!r} is not a full commit id")
    return commit_id


class RefStore:
    """Branch heads of one graph, stored in an `ObjectStore`."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        # The newest entry seen of each branch (module docstring): where head() starts.
        self._seen: dict[str, RefEntry] = {}

    # --- keys --------------------------------------------------------------------------

    @staticmethod
    def _dir(branch: str) -> str:
        if not isinstance(branch, str):  # unhashable or not a name: the usual error
            validate_branch_name(branch)
        return _branch_dir(branch)

    @classmethod
    def _entry_key(cls, branch: str, seq: int) -> str:
        return f"{cls._dir(branch)}/{seq:020d}.json"

    # --- reading -----------------------------------------------------------------------

    def _entry(self, branch: str, seq: int) -> RefEntry | None:
        key = self._entry_key(branch, seq)
        data = self._store.get(key)
        if data is None:
            return None
        entry = _parse_entry(data, key)
        if entry.seq != seq:
            raise GraphLakeError(f"ref entry {key} is corrupt: it says seq {entry.seq}")
        return entry

    def entry(self, branch: str, seq: int) -> RefEntry | None:
        """Entry `seq` of `branch`, None if there is none (yet)."""
        return self._entry(branch, seq)

    def _exists(self, branch: str, seq: int) -> bool:
        return self._store.exists(self._entry_key(branch, seq))

    def _read_hint(self, branch: str) -> int | None:
        data = self._store.get(f"{self._dir(branch)}/{_HINT}")
        try:
            seq = int(data.decode("ascii")) if data is not None else None
        except (UnicodeDecodeError, ValueError):
            return None  # a damaged hint is just a missing hint
        return seq if seq is not None and seq >= 1 else None

    def _listed_seqs(self, branch: str) -> list[int]:
        seqs = []
        for key in self._store.list(self._dir(branch)):
            match = _ENTRY_RE.fullmatch(key.rsplit("/", 1)[-1])
            if match:
                seqs.append(int(match.group(1)))
        return sorted(seqs)

    def _last_from(self, branch: str, start: int) -> int:
        """Newest seq, given that `start` exists: gallop forward, then bisect.

        Entries are dense (N+1 is only ever written after N exists), so existence is
        monotone in seq. A lag of k costs O(log k) probes; no lag costs one.
        """
        low, step = start, 1
        while self._exists(branch, low + step):
            low += step
            step *= 2
        high = low + step  # known absent
        while high - low > 1:
            mid = (low + high) // 2
            if self._exists(branch, mid):
                low = mid
            else:
                high = mid
        return low

    def head(self, branch: str) -> RefEntry | None:
        """Newest entry of `branch` (a tombstone if deleted), None if it never existed."""
        self._dir(branch)  # an invalid name raises InvalidNameError (validated once)
        seen = self._seen.get(branch)
        if seen is not None:  # at or before the head: one probe when nothing followed it
            last = self._last_from(branch, seen.seq)
            if last == seen.seq:
                return seen
            found = self._entry(branch, last)
            if found is None:
                raise GraphLakeError(f"ref entry {last} of branch {branch!r} disappeared")
            return self._remember(branch, found)
        hint = self._read_hint(branch)
        entry = self._entry(branch, hint) if hint is not None else None
        if entry is None:
            # No hint yet (or one that points nowhere): one listing finds the newest.
            seqs = self._listed_seqs(branch)
            if not seqs:
                return None
            start = seqs[-1]
        else:
            start = entry.seq
        last = self._last_from(branch, start)
        if entry is not None and last == entry.seq:
            return self._remember(branch, entry)
        found = self._entry(branch, last)
        if found is None:
            raise GraphLakeError(f"ref entry {last} of branch {branch!r} disappeared")
        return self._remember(branch, found)

    def _remember(self, branch: str, entry: RefEntry) -> RefEntry:
        """Keep `entry` as the newest seen of `branch` unless a newer one is (threads)."""
        seen = self._seen.get(branch)
        if seen is None or seen.seq < entry.seq:
            self._seen[branch] = entry
        return entry

    def history(self, branch: str) -> list[RefEntry]:
        """Every entry of `branch`, oldest first (the reflog); [] if it never existed."""
        entries = []
        for seq in self._listed_seqs(branch):
            entry = self._entry(branch, seq)
            if entry is not None:
                entries.append(entry)
        return entries

    def newest_entries(
        self, branch: str, limit: int | None = None, since: str | None = None
    ) -> list[RefEntry]:
        """The entries of `branch`, newest first: at most `limit`, and (with `since`, a
        `utc_now()`-style time) only those written at or after `since`. One listing,
        then one read per entry returned (plus one)."""
        out: list[RefEntry] = []
        for seq in reversed(self._listed_seqs(branch)):
            if limit is not None and len(out) >= limit:
                break
            entry = self._entry(branch, seq)
            if entry is None:
                continue
            if since is not None and entry.time < since:
                break
            out.append(entry)
        return out

    def names(self) -> list[str]:
        """Every branch that ever existed (deleted ones too), sorted."""
        names = []
        for key in self._store.list_dirs(REFS_DIR):
            try:
                names.append(decode_name(key.rsplit("/", 1)[-1]))
            except InvalidNameError:
                _log.warning("ignoring unexpected folder %s", key)
        return sorted(names)

    def list(self) -> dict[str, RefEntry]:
        """Live branches, name -> head entry, sorted by name."""
        names = []
        for key in self._store.list_dirs(REFS_DIR):
            try:
                names.append(decode_name(key.rsplit("/", 1)[-1]))
            except InvalidNameError:
                _log.warning("ignoring unexpected folder %s", key)
        # One head() is a few requests; on S3 doing them concurrently hides the latency.
        with ThreadPoolExecutor(max_workers=max(1, min(16, len(names)))) as pool:
            heads = list(pool.map(self.head, names))
        return {
            name: head
            for name, head in sorted(zip(names, heads, strict=True))
            if head is not None and head.commit is not None
        }

    # --- writing -----------------------------------------------------------------------

    def _write(self, branch: str, entry: RefEntry) -> bool:
        """Conditionally create `entry`; True if ours landed. Then refresh the hint."""
        key = self._entry_key(branch, entry.seq)
        data = _entry_bytes(entry)
        if not self._store.create(key, data) and self._store.get(key) != data:
            return False
        self._remember(branch, entry)
        self._write_hint(branch, entry.seq)
        return True

    def _write_hint(self, branch: str, seq: int) -> None:
        try:
            self._store.put(f"{self._dir(branch)}/{_HINT}", str(seq).encode("ascii"))
        except Exception:  # the ref already moved; a stale hint only costs a probe or two
            _log.warning("could not update the head hint of %r", branch, exc_info=True)

    def create(self, branch: str, commit_id: str, incarnation: str | None = None) -> RefEntry:
        """Start a new branch (or a new life of a deleted one) at `commit_id`.

        `incarnation` (default: a fresh ULID) names this life of the branch; it owns the
        Lance branches the graph branch writes to. Graph init passes the owner it gave
        the tables it just created.

        Raises BranchExistsError if the branch is live, including when another writer
        creates it concurrently: after a tombstone (or nothing) only a create can land,
        so losing that race means the branch now exists.
        """
        # python-ulid reads package metadata on import: only when needed
        from ulid import ULID

        _check_commit_id(commit_id)
        check_branch(branch, "create branch")
        for _ in range(_MAX_RETRIES):
            current = self.head(branch)
            if current is not None and current.commit is not None:
                raise BranchExistsError(f"branch {branch!r} exists already")
            entry = RefEntry(
                seq=current.seq + 1 if current is not None else 1,
                commit=commit_id,
                incarnation=incarnation or str(ULID()),
                time=utc_now(),
                author=str(current_author()),
                action="create",
            )
            if self._write(branch, entry):
                return entry
        raise ConcurrentWriteError(
            f"could not create branch {branch!r}: too many concurrent writers"
        )

    def cas(
        self,
        branch: str,
        expected: RefEntry,
        commit_id: str,
        op: str | None = None,
        action: str = "write",
    ) -> RefEntry:
        """Move `branch` from `expected` (its head as read earlier) to `commit_id`.

        ConcurrentWriteError if the branch moved since `expected`; BranchNotFoundError if
        `expected` is a tombstone. `expected` must come from this branch's head(). `op`
        (a recovery record id) is stored in the entry: recovery reads it to tell whether
        a crashed publication landed. `action` names the operation in the reflog; the
        entry records `current_author()` as who moved the branch.
        """
        _check_commit_id(commit_id)
        check_branch(branch)
        if expected.commit is None:
            raise BranchNotFoundError(f"branch {branch!r} was deleted")
        entry = RefEntry(
            expected.seq + 1,
            commit_id,
            expected.incarnation,
            utc_now(),
            op,
            str(current_author()),
            action,
        )
        if not self._write(branch, entry):
            raise ConcurrentWriteError(
                f"branch {branch!r} moved since entry {expected.seq} "
                f"(commit {expected.commit[:12]}); re-read it and retry"
            )
        return entry

    def delete(self, branch: str, expected: RefEntry | None = None) -> RefEntry:
        """Delete `branch` by writing a tombstone; returns the tombstone.

        With `expected`, only if the branch is still there (ConcurrentWriteError otherwise);
        without, whatever it points to. BranchNotFoundError if it is not live.
        """
        check_branch(branch, "delete branch")
        for _ in range(_MAX_RETRIES):
            current = expected if expected is not None else self.head(branch)
            if current is None or current.commit is None:
                raise BranchNotFoundError(f"no branch {branch!r}")
            tombstone = RefEntry(
                current.seq + 1,
                None,
                current.incarnation,
                utc_now(),
                author=str(current_author()),
                action="delete",
            )
            if self._write(branch, tombstone):
                return tombstone
            if expected is not None:
                raise ConcurrentWriteError(
                    f"branch {branch!r} moved since entry {expected.seq}; not deleted"
                )
        raise ConcurrentWriteError(
            f"could not delete branch {branch!r}: too many concurrent writers"
        )
