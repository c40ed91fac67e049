"""Graph algorithms over the commit DAG: log, ancestry and merge bases.

Commits carry no generation numbers, and commit times may be skewed between machines, so
nothing here may *rely* on time for correctness. Time is only used as the order in which
to visit commits (newest first), which keeps walks short when clocks are sane:

* `merge_bases*` and `is_ancestor` use the "paint down to common" walk (as in git): paint
  commits with one colour per head, walking from the heads; a commit with every colour
  is a common ancestor, and its ancestors are painted STALE. The walk stops when every
  queued commit is STALE: anything not visited yet lies below a common ancestor that was
  found, so it cannot be a *best* one. This stop rule is correct in any visiting order;
  a good order only makes it come early. Candidates that are ancestors of other
  candidates are then removed with the same walk (exactly, not by time).
* `log` walks lazily, newest first, listing a commit once every child it has read is
  listed and reading ahead by the clock skew it has seen (`iter_log`): its first page
  reads about as many commits as it lists.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from itertools import islice

from graphlake.catalog.commits import Commit, CommitStore

__all__ = ["History", "is_ancestor", "iter_log", "log", "merge_bases", "merge_bases_many"]


def _timestamp(commit: Commit) -> float:
    try:
        return datetime.fromisoformat(commit.time).timestamp()
    except ValueError:
        return 0.0  # an unparsable time only affects visiting order, never results


class _Painter:
    """One paint-down walk. Colours are bits 0..n-1; `stale`, the bit just above them
    (Python ints have no width limit, so any number of heads fits), marks
    known-redundant commits."""

    def __init__(self, commits: CommitStore, colours: Sequence[tuple[str, int]]) -> None:
        """`colours` gives each starting commit its colour bits (several may share one)."""
        self._commits = commits
        self.all_colours = 0
        self.flags: dict[str, int] = {}
        self._processed: dict[str, int] = {}  # flags each commit was last expanded with
        self._heap: list[tuple[float, str]] = []
        self._queued: set[str] = set()
        self._nonstale_queued = 0
        self.candidates: list[str] = []
        for _, colour in colours:
            self.all_colours |= colour
        self.stale = 1 << self.all_colours.bit_length()
        for head, colour in colours:
            self._paint(head, colour)
        self._enqueue(list(dict.fromkeys(head for head, _ in colours)))

    def _paint(self, commit_id: str, flags: int) -> bool:
        """Add flags; True if that changed anything. Keeps the non-stale count exact."""
        old = self.flags.get(commit_id, 0)
        new = old | flags
        if new == old:
            return False
        self.flags[commit_id] = new
        if commit_id in self._queued and not old & self.stale and new & self.stale:
            self._nonstale_queued -= 1
        return True

    def _enqueue(self, commit_ids: list[str]) -> None:
        fresh = [c for c in commit_ids if c not in self._queued]
        for commit in self._commits.get_many(fresh):
            # Newest first; the id breaks ties so runs are reproducible.
            heapq.heappush(self._heap, (-_timestamp(commit), commit.id))
            self._queued.add(commit.id)
            if not self.flags[commit.id] & self.stale:
                self._nonstale_queued += 1

    def step(self) -> str | None:
        """Expand the newest queued commit; returns it, or None when the walk is over."""
        if self._nonstale_queued == 0:
            return None
        _, commit_id = heapq.heappop(self._heap)
        self._queued.discard(commit_id)
        flags = self.flags[commit_id]
        if not flags & self.stale:
            self._nonstale_queued -= 1
        if flags & self.all_colours == self.all_colours and not flags & self.stale:
            # A common ancestor; everything below it is redundant as a merge base.
            self.candidates.append(commit_id)
            flags |= self.stale
        if self._processed.get(commit_id) == flags:
            return commit_id
        self._processed[commit_id] = flags
        changed = [p for p in self._commits.get(commit_id).parents if self._paint(p, flags)]
        # A parent whose flags changed after it was expanded must be expanded again.
        self._enqueue([p for p in changed if p not in self._queued])
        return commit_id

    def run(self) -> None:
        while self.step() is not None:
            pass


# --- ancestry ---------------------------------------------------------------------------


def is_ancestor(commits: CommitStore, a: str, b: str) -> bool:
    """True if commit `a` is `b` or an ancestor of `b`."""
    a, b = commits.resolve(a), commits.resolve(b)
    if a == b:
        commits.get(a)  # unknown ids still raise CommitNotFoundError
        return True
    return _reaches(commits, a, [b])


def _reaches(commits: CommitStore, target: str, sources: list[str]) -> bool:
    """True if `target` is an ancestor of (or equal to) any of `sources`.

    Paints `target` with colour 1 and all sources with colour 2: `target` gets colour 2
    exactly when a path leads to it from a source. The walk cannot stop before that
    happens: it stops only when every queued commit is STALE, i.e. carries both colours;
    a queued commit on a path from a source down to `target` that carries colour 1 is
    also an ancestor of `target`, so it is `target` itself.
    """
    painter = _Painter(commits, [(target, 0b01)] + [(s, 0b10) for s in sources])
    while not painter.flags[target] & 0b10:
        if painter.step() is None:
            return False
    return True


def merge_bases(commits: CommitStore, a: str, b: str) -> list[str]:
    """Best common ancestors of `a` and `b` (several for criss-cross histories)."""
    return merge_bases_many(commits, [a, b])


def merge_bases_many(commits: CommitStore, heads: Iterable[str]) -> list[str]:
    """Best common ancestors of all `heads`: commits that are ancestors of every head,
    none of them an ancestor of another. Sorted by id; [] if the histories are unrelated.
    """
    ids = list(dict.fromkeys(commits.resolve(h) for h in heads))
    if not ids:
        raise ValueError("merge_bases_many needs at least one head")
    if len(ids) == 1:
        commits.get(ids[0])
        return ids
    painter = _Painter(commits, [(head, 1 << bit) for bit, head in enumerate(ids)])
    painter.run()
    # A candidate that got STALE was reached from another candidate: it is redundant.
    candidates = [c for c in painter.candidates if not painter.flags[c] & painter.stale]
    return sorted(_remove_redundant(commits, candidates))


def _remove_redundant(commits: CommitStore, candidates: list[str]) -> list[str]:
    """Drop every candidate that is an ancestor of another one (exact, not by time)."""
    if len(candidates) <= 1:
        return candidates
    return [
        candidate
        for index, candidate in enumerate(candidates)
        if not _reaches(commits, candidate, candidates[:index] + candidates[index + 1 :])
    ]


# --- log ----------------------------------------------------------------------------------


def log(
    commits: CommitStore,
    commit_id: str,
    limit: int | None = None,
    exclude: Sequence[str] = (),
) -> list[Commit]:
    """Commits reachable from `commit_id` but not from any of `exclude`, newest first,
    each once (see `iter_log`). An `exclude` (a range's merge base) is read whole."""
    if limit is not None and limit <= 0:
        return []
    hidden: set[str] = set()
    for other in exclude:
        hidden |= _reachable(commits, commits.resolve(other), hidden).keys()
    shown = (c for c in iter_log(commits, commit_id) if c.id not in hidden)
    return list(islice(shown, limit))


def _reachable(
    commits: CommitStore, start: str, stop: set[str] | frozenset[str] = frozenset()
) -> dict[str, Commit]:
    """All ancestors of `start` (inclusive) not in `stop` (whose ancestors are skipped
    too), fetched one generation at a time."""
    found: dict[str, Commit] = {}
    frontier = [start] if start not in stop else []
    while frontier:
        batch = commits.get_many(frontier)
        for commit in batch:
            found[commit.id] = commit
        frontier = list(
            dict.fromkeys(p for c in batch for p in c.parents if p not in found and p not in stop)
        )
    return found


def iter_log(commits: CommitStore, commit_id: str) -> Iterator[Commit]:
    """Commits reachable from `commit_id`, newest first, each once, read lazily: the
    first page costs about one read per commit listed, however long the history.

    A commit is listed only once every child the walk has read is listed (so children
    come before parents among the commits read), and among those the newest first (ties:
    smaller id). Before listing a commit, the walk reads ahead every unread parent whose
    child is within the largest clock skew seen so far (a parent newer than its child)
    of it, so a parent whose time lies no more than that is never listed before its
    child. Proving the order against any skew would take reading the whole history;
    like git's date order, this does not.
    """
    return _LazyLog(commits, commits.resolve(commit_id)).walk()


class _LazyLog:
    def __init__(self, commits: CommitStore, start: str) -> None:
        self._commits = commits
        self._read: dict[str, Commit] = {}
        self._times: dict[str, float] = {}
        self._waiting: dict[str, int] = {}  # commit -> read children not listed yet
        self._listed: set[str] = set()
        self._ready: list[tuple[float, str]] = []  # read, every read child listed
        self._unread: list[tuple[float, str]] = []  # parents not read, by newest child
        self._oldest_child: dict[str, float] = {}  # commit -> time of its oldest read child
        self._skew = 0.0  # the most a parent's time was seen to exceed its child's
        self._read_all([start])

    def walk(self) -> Iterator[Commit]:
        while self._ready:
            top = self._ready[0]
            self._read_ahead(-top[0])
            if self._ready[0] != top:
                continue  # what was read ahead comes first, or changed what is ready
            _, cid = heapq.heappop(self._ready)
            if cid in self._listed or self._waiting.get(cid, 0):
                continue  # a stale entry: listed already, or a child was read since
            self._listed.add(cid)
            commit = self._read[cid]
            yield commit
            for parent in commit.parents:
                self._waiting[parent] -= 1
                if parent in self._read and not self._waiting[parent]:
                    heapq.heappush(self._ready, (-self._times[parent], parent))

    def _read_ahead(self, newest: float) -> None:
        """Read every unread parent with a child no older than `newest - skew`."""
        while self._unread and -self._unread[0][0] >= newest - self._skew:
            batch: list[str] = []
            while self._unread and -self._unread[0][0] >= newest - self._skew:
                cid = heapq.heappop(self._unread)[1]
                if cid not in self._read and cid not in batch:
                    batch.append(cid)
            self._read_all(batch)

    def _read_all(self, ids: list[str]) -> None:
        fresh = list(self._commits.get_many(ids))
        for commit in fresh:
            self._read[commit.id] = commit
            self._times[commit.id] = _timestamp(commit)
        for commit in fresh:
            when = self._times[commit.id]
            if commit.id in self._oldest_child:
                self._skew = max(self._skew, when - self._oldest_child[commit.id])
            for parent in commit.parents:
                self._waiting[parent] = self._waiting.get(parent, 0) + 1
                self._oldest_child[parent] = min(self._oldest_child.get(parent, when), when)
                if parent in self._read:
                    self._skew = max(self._skew, self._times[parent] - when)
                else:
                    heapq.heappush(self._unread, (-when, parent))
        for commit in fresh:  # once every child of this batch is counted
            if not self._waiting.get(commit.id, 0):
                heapq.heappush(self._ready, (-self._times[commit.id], commit.id))


class History:
    """The functions above bound to one `CommitStore` (what `Graph` holds on to)."""

    def __init__(self, commits: CommitStore) -> None:
        self.commits = commits

    def log(
        self, commit_id: str, limit: int | None = None, exclude: Sequence[str] = ()
    ) -> list[Commit]:
        return log(self.commits, commit_id, limit, exclude)

    def iter_log(self, commit_id: str) -> Iterator[Commit]:
        return iter_log(self.commits, commit_id)

    def is_ancestor(self, a: str, b: str) -> bool:
        return is_ancestor(self.commits, a, b)

    def ancestors_since(self, head: str, stop: set[str]) -> set[str]:
        """Proper ancestors of `head` reached without walking past any commit in `stop`
        (the stop commits themselves are included when reached). Cheap when `stop` holds
        a merge base close to the head, as for short-lived branches."""
        seen: set[str] = set()
        todo = list(self.commits.get(head).parents)
        while todo:
            cid = todo.pop()
            if cid in seen:
                continue
            seen.add(cid)
            if cid not in stop:
                todo.extend(self.commits.get(cid).parents)
        return seen

    def merge_bases(self, a: str, b: str) -> list[str]:
        return merge_bases(self.commits, a, b)

    def merge_bases_many(self, heads: Iterable[str]) -> list[str]:
        return merge_bases_many(self.commits, heads)
