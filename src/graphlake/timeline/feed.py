"""The change feed: every row change on a branch, oldest first along first parents,
in pages that resume exactly where the last one stopped.

A commit's entries are what it changed against its first parent (`walk.commit_changes`:
lineage per commit, O(changed rows); a merge commit's entries are its diff against its
first parent), ordered by (table, key); runs of write commits that recorded their
effects are read at once (`timeline/batch.py`), with the same entries. The feed is the
sequence of those entries over the first-parent chain from the branch's root commit to
its head; `since=None` starts at the beginning of that history (the root commit itself
changes nothing).

A cursor names a point in that sequence: (branch, commit id, entries of that commit
already delivered, or "all of them"), as an opaque string signed with an HMAC keyed by
the graph's identity, so another graph's cursor or an edited one is refused. Commits
are immutable, so a cursor resumes exactly, in any process, after any restart.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import (
    ChangeFeedError,
    CursorExpiredError,
    CursorResetError,
)
from graphlake.timeline import batch, walk
from graphlake.timeline.rows import author_text

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10_000
_PREFIX = "glc1."
_DONE = -1  # position: every entry of the commit was delivered


@dataclass(frozen=True)
class FeedEntry:
    commit: str
    author: str
    time: str
    table: str
    key: str
    op: str
    changes: dict[str, tuple[Any, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "author": self.author,
            "time": self.time,
            "table": self.table,
            "key": self.key,
            "op": self.op,
            "changes": {p: {"old": o, "new": n} for p, (o, n) in self.changes.items()},
        }


@dataclass
class ChangePage:
    """One page of the feed: `entries` oldest first, `cursor` to pass as `since` for
    the next page (it resumes right after the last entry; with no new commits the next
    page is empty and the cursor stays where it was)."""

    entries: list[FeedEntry] = field(default_factory=list)
    cursor: str = ""
    head: str = ""  # the branch head this page was read against

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [e.to_dict() for e in self.entries],
            "cursor": self.cursor,
            "head": self.head,
        }


# --- cursors ------------------------------------------------------------------------------


def _key(repo: Repo) -> bytes:
    info = repo.info
    return hashlib.sha256(f"graphlake-feed:{info.created}:{info.schema_id}".encode()).digest()


def encode_cursor(repo: Repo, branch: str, commit: str, position: int) -> str:
    body = json.dumps({"b": branch, "c": commit, "p": position}, separators=(",", ":"))
    raw = body.encode()
    mac = hmac.new(_key(repo), raw, hashlib.sha256).digest()[:16]
    return _PREFIX + base64.urlsafe_b64encode(raw + mac).decode().rstrip("=")


def decode_cursor(repo: Repo, cursor: str) -> tuple[str, str, int]:
    """(branch, commit id, position) of a cursor this graph issued."""
    bad = ChangeFeedError(f"cursor {cursor[:40]!r} is not a change-feed cursor of this graph")
    if not isinstance(cursor, str) or not cursor.startswith(_PREFIX):
        raise bad
    text = cursor[len(_PREFIX) :]
    try:
        blob = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError):
        raise bad from None
    raw, mac = blob[:-16], blob[-16:]
    if len(blob) <= 16 or not hmac.compare_digest(
        mac, hmac.new(_key(repo), raw, hashlib.sha256).digest()[:16]
    ):
        raise bad
    data = json.loads(raw)
    return data["b"], data["c"], int(data["p"])


# --- pages --------------------------------------------------------------------------------


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ChangeFeedError(f"limit must be an integer from 1 to {MAX_LIMIT}, not {limit!r}")
    return limit


def changes(
    repo: Repo,
    branch: str = "main",
    since: str | None = None,
    limit: int = DEFAULT_LIMIT,
    *,
    batched: bool = True,
) -> ChangePage:
    """The next page of `branch`'s feed after cursor `since` (None: from the beginning
    of its history), at most `limit` entries. `batched=False` reads every commit on its
    own (`walk.commit_changes`), as before runs were read at once (`timeline/batch.py`):
    the same entries, for tests and comparisons."""
    check_limit(limit)
    start: tuple[str, int] | None = None
    if since is not None:
        cur_branch, commit_id, position = decode_cursor(repo, since)
        if cur_branch != branch:
            raise ChangeFeedError(f"the cursor is for branch {cur_branch!r}, not {branch!r}")
        start = (commit_id, position)
    _, head = repo.branch_head(branch)
    chain = _chain_after(repo, head, branch, start)
    page = ChangePage(head=head.id)
    last: tuple[str, int] | None = start
    if start is not None and start[1] != _DONE:
        commit = repo.commits.get(start[0])
        chain.insert(0, commit)  # the cursor's own commit, partly delivered
    source = _Source(repo, chain, batched)
    for index, commit in enumerate(chain):
        skip = start[1] if start is not None and commit.id == start[0] else 0
        room = limit - len(page.entries)
        entries = source.entries(index, skip + room)
        taken = entries[skip : skip + room]
        page.entries += taken
        end = skip + len(taken)
        last = (commit.id, _DONE if end >= len(entries) else end)
        if len(page.entries) >= limit:
            break
    if last is None:  # a history without commits after its root: resume at the head
        last = (head.id, _DONE)
    page.cursor = encode_cursor(repo, branch, last[0], last[1])
    return page


def _chain_after(
    repo: Repo, head: Commit, branch: str, start: tuple[str, int] | None
) -> list[Commit]:
    """The first-parent commits after the cursor's commit (from the root when there is
    none), oldest first. Catalog reads only."""
    newer: list[Commit] = []
    for commit in walk.first_parents(repo, head):
        if start is not None and commit.id == start[0]:
            newer.reverse()
            return newer
        newer.append(commit)
    if start is None:
        newer.reverse()
        return newer
    root = newer[-1].id
    # Asked of the store, not the commit cache: gc may have removed it since it was read.
    if not repo.store.exists(repo.commits.key(start[0])):
        raise CursorExpiredError(
            f"the cursor's commit {start[0][:12]} is gone (gc removed it); the oldest "
            f"point of {branch!r} is its root commit {root[:12]}: start again without a "
            "cursor",
            oldest=root,
        )
    raise CursorResetError(
        f"branch {branch!r} was reset past the cursor: commit {start[0][:12]} is no "
        f"longer on its first-parent history (head is now {head.id[:12]})",
        head=head.id,
    )


class _Source:
    """Each commit's entries along `chain` (first parents, oldest first): a run of
    batchable commits is read at once (`batch.run_changes`), just long enough to fill
    what the page still needs by their recorded effects; any other commit on its own."""

    def __init__(self, repo: Repo, chain: list[Commit], batched: bool) -> None:
        self._repo, self._chain, self._batched = repo, chain, batched
        self._done: dict[int, list[FeedEntry]] = {}

    def entries(self, index: int, need: int) -> list[FeedEntry]:
        found = self._done.pop(index, None)
        if found is not None:
            return found
        commit = self._chain[index]
        if not commit.parents:
            return []
        parent = self._parent(index)
        if not self._batched or not batch.batchable(parent, commit):
            return _entries(commit, walk.commit_changes(self._repo, commit, parent))
        run, total = [commit], batch.bound(commit)
        for later in self._chain[index + 1 :]:
            if total >= need or not batch.batchable(run[-1], later):
                break
            run.append(later)
            total += batch.bound(later)
        for offset, (member, changes) in enumerate(
            zip(run, batch.run_changes(self._repo, parent, run), strict=True)
        ):
            self._done[index + offset] = _entries(member, changes)
        return self._done.pop(index)

    def _parent(self, index: int) -> Commit:
        commit = self._chain[index]
        if index and self._chain[index - 1].id == commit.parents[0]:
            return self._chain[index - 1]
        return self._repo.commits.get(commit.parents[0])


def _entries(commit: Commit, changes: list[walk.RowChange]) -> list[FeedEntry]:
    author = author_text(commit)
    return [
        FeedEntry(commit.id, author, commit.time, c.table, c.key, c.op, c.changes) for c in changes
    ]
