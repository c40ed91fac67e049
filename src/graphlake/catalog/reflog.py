"""The reflog: every move of a branch (write, merge, revert, cherry-pick, reset, create,
delete), newest first, with its time, author and old -> new commit.

It is not a second log: a branch ref already is an append-only sequence of entry
objects, each created with a conditional create inside the publication that moves the
ref (refs.py), so no entry is lost under concurrency and none needs an append. The
reflog reads those entries back. `gc` keeps the commits the entries of the last
`REFLOG_KEEP` (default 30 days) name, so a bad reset or merge can itself be undone with
`reset_branch(branch, <old commit>)`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from graphlake.catalog.refs import RefEntry, RefStore
from graphlake.errors import BranchNotFoundError

__all__ = ["REFLOG_KEEP", "ReflogEntry", "kept_commits", "reflog"]

REFLOG_KEEP = dt.timedelta(days=30)


@dataclass(frozen=True)
class ReflogEntry:
    """One move of a branch: `old` -> `new` (None: the branch did not exist / was
    deleted), at `time`, by `author`, through `action`."""

    seq: int
    time: str
    author: str
    action: str
    old: str | None
    new: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def reflog(refs: RefStore, branch: str, limit: int | None = None) -> list[ReflogEntry]:
    """The moves of `branch` (live or deleted), newest first; `BranchNotFoundError` if
    it never existed."""
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    entries = refs.newest_entries(branch, None if limit is None else limit + 1)
    if not entries:
        raise BranchNotFoundError(f"no branch {branch!r} (it never existed)")
    out = []
    for entry, before in zip(entries, [*entries[1:], None], strict=True):
        out.append(_entry(entry, before))
    return out[:limit] if limit is not None else out


def _entry(entry: RefEntry, before: RefEntry | None) -> ReflogEntry:
    action = entry.action or (
        "delete"
        if entry.commit is None
        else "create"
        if before is None or before.commit is None
        else "move"
    )
    return ReflogEntry(
        entry.seq,
        entry.time,
        entry.author or "unknown",
        action,
        before.commit if before is not None else None,
        entry.commit,
    )


def kept_commits(refs: RefStore, since: str) -> list[str]:
    """The commits the reflog entries written at or after `since` (a `utc_now()`-style
    time) name, of every branch that ever existed, live or deleted: what `gc` keeps for
    the reflog and `fsck` checks (deduplicated, in branch then newest-first order)."""
    out: list[str] = []
    for name in refs.names():
        out += [e.commit for e in refs.newest_entries(name, since=since) if e.commit]
    return list(dict.fromkeys(out))
