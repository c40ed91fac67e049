"""The delivery engine: one daemon thread per webhook, never on the write path.

Each thread polls the refs and tags every `poll_interval_s`, turns what is new since its
cursor (cursor.py) into events (events.py), POSTs them one at a time (sender.py) and
saves its cursor after each delivered event. So:

- at least once: the cursor moves only after the receiver answered 2xx; a server killed
  mid-delivery sends that event again after its restart (same delivery id);
- ordered per branch: a branch's commits go out in first-parent order, oldest first,
  and the next event waits until the previous one was taken;
- never on the write path: writers only move refs; a slow or dead receiver delays only
  its own webhook's thread.

A branch is followed through its ref entries (catalog/refs.py): each entry after the
cursor's moved the branch from the previous commit to its own; the commits it added are
the first-parent walk between the two. An entry that does not descend from the previous
commit (a reset backwards or sideways) is logged and skipped: delivery goes on from the
new head. A branch the webhook has not seen yet is followed from its creation when it
was created after the webhook started (`since`), else from its head when first seen.
Tags: each tag name listed that the cursor does not hold is announced once.

Merge requests are followed the same way, through their stored event lists
(catalog/reviews.py, read only): the cursor holds per request the seq of the last event
delivered, so an event a restart interrupted is sent again and none is lost, whichever
process (server, CLI, library) appended it. Requests that exist when the webhook first
starts are taken as they stand (not announced); a request that was closed or merged
is never read again. `branches` filters by the request's target branch (`into`).
"""

from __future__ import annotations

import fnmatch
import logging
import threading
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit, utc_now
from graphlake.catalog.refs import RefEntry
from graphlake.catalog.reviews import OPEN, ReviewStore
from graphlake.errors import CommitNotFoundError, GraphLakeError
from graphlake.server.webhooks.cursor import BranchPosition, CursorMoved, CursorState, CursorStore
from graphlake.server.webhooks.events import (
    commit_event,
    merge_request_event,
    tag_event,
)
from graphlake.server.webhooks.log import DeliveryLog
from graphlake.server.webhooks.sender import Sender

if TYPE_CHECKING:
    from graphlake.graph import Graph
    from graphlake.server.config import Webhook

__all__ = ["MAX_WALK", "WebhookEngine", "WebhookWorker"]

_log = logging.getLogger(__name__)

# The longest first-parent walk one ref move is followed for; a longer one is treated
# like a reset (logged, delivery goes on from the new head).
MAX_WALK = 10_000


class WebhookWorker:
    """One webhook's thread, cursor, log and sender."""

    def __init__(self, graph: Graph, hook: Webhook) -> None:
        self.graph = graph
        self.hook = hook
        self._stop = threading.Event()
        self._cursor = CursorStore(graph.repo.store, hook.name)
        self._log = DeliveryLog(graph.repo.store, hook.name, hook.log_size)
        self._sender = Sender(hook, self._log, self._stop)
        self._seq = 0
        self._state: CursorState | None = None
        self._reviews = ReviewStore(graph.repo.store)
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        try:
            self._load()  # the starting position is taken now, before any request
        except Exception:
            _log.exception("webhook %s: could not load its cursor (retried)", self.hook.name)
        self._thread = threading.Thread(
            target=self._loop, name=f"graphlake-webhook-{self.hook.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.hook.timeout_s + 1 if timeout is None else timeout)
        self._sender.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:  # logged, never raised: the next round tries again
                _log.exception("webhook %s: polling failed", self.hook.name)
            self._stop.wait(self.hook.poll_interval_s)

    # --- the cursor -------------------------------------------------------------------

    def _load(self) -> CursorState:
        loaded = self._cursor.load()
        if loaded is not None:
            self._seq, self._state = loaded
            if self._state.requests is None:  # saved before requests were followed
                self._state.requests = self._request_positions()
                self._save(self._state)
            return self._state
        state = CursorState(since=utc_now())
        for name, head in self._heads().items():
            state.branches[name] = BranchPosition(head.seq, head.commit or "", head.incarnation)
        state.tags = self._tag_times(self.graph.repo.tags.names())
        state.requests = self._request_positions()
        self._save(state)
        return state

    def _request_positions(self) -> dict[int, int]:
        """Every merge request as it stands now (a start position: nothing announced)."""
        out: dict[int, int] = {}
        for rid in self._reviews.ids():
            request = self._reviews.get(rid)
            seq = len(request.events)
            out[rid] = seq if request.state == OPEN else -seq
        return out

    def _save(self, state: CursorState) -> None:
        try:
            self._seq = self._cursor.save(state, self._seq)
        except CursorMoved:
            _log.warning("webhook %s: another process moved its cursor; reloading", self.hook.name)
            self._seq, self._state = self._cursor.load() or (0, None)
            raise
        self._state = state

    # --- one round ----------------------------------------------------------------

    def poll_once(self) -> None:
        """Deliver everything new since the cursor (returns early when stopping)."""
        state = self._state if self._state is not None else self._load()
        try:
            heads = self._heads()
            for name in sorted(set(state.branches) - set(heads)):
                del state.branches[name]  # deleted (or no longer matched)
                self._save(state)
            for name, head in heads.items():
                if not self._follow(state, name, head):
                    return
            self._tags(state)
            self._requests(state)
        except CursorMoved:
            return  # reloaded; the next round goes on from the other process's position

    def _matches(self, branch: str) -> bool:
        return any(fnmatch.fnmatchcase(branch, p) for p in self.hook.branches)

    def _heads(self) -> dict[str, RefEntry]:
        refs = self.graph.repo.refs
        out: dict[str, RefEntry] = {}
        for name in refs.names():
            if not self._matches(name):
                continue
            head = refs.head(name)
            if head is not None and head.commit is not None:
                out[name] = head
        return out

    def _follow(self, state: CursorState, branch: str, head: RefEntry) -> bool:
        """Deliver `branch`'s new commits; False if the server is stopping."""
        pos = state.branches.get(branch)
        if pos is None or pos.incarnation != head.incarnation:
            pos = self._start(state, branch, head)
            state.branches[branch] = pos
            self._save(state)
        seq = pos.seq
        while seq < head.seq:
            entry = self.graph.repo.refs.entry(branch, seq + 1)
            if entry is None or entry.commit is None or entry.incarnation != pos.incarnation:
                return True  # deleted meanwhile: the next round sees it
            for commit, parent in self._added(branch, pos.commit, entry):
                event = commit_event(
                    self.hook.name, branch, commit, parent, entry.action, entry.seq
                )
                if event.name not in self.hook.events:
                    continue
                if not self._sender.deliver(event):
                    return False
                pos = BranchPosition(seq, commit.id, pos.incarnation)
                state.branches[branch] = pos
                self._save(state)
            seq = entry.seq
            pos = BranchPosition(seq, entry.commit, pos.incarnation)
            state.branches[branch] = pos
            self._save(state)
        return not self._stop.is_set()

    def _start(self, state: CursorState, branch: str, head: RefEntry) -> BranchPosition:
        """Where to follow a branch the cursor does not hold from: the last entry of its
        current life written before the webhook started, else the entry that created
        it (so what was written since its creation is delivered)."""
        refs = self.graph.repo.refs
        here = head
        while here.time >= state.since and here.seq > 1:
            before = refs.entry(branch, here.seq - 1)
            if before is None or before.commit is None or before.incarnation != head.incarnation:
                break  # `here` created this life of the branch
            here = before
        return BranchPosition(here.seq, here.commit or "", head.incarnation)

    def _added(self, branch: str, old: str, entry: RefEntry) -> list[tuple[Commit, Commit | None]]:
        """The commits `entry` added to `branch`'s first-parent history after `old`,
        oldest first, each with its first parent; [] (logged) for a reset past `old`."""
        new = entry.commit
        assert new is not None
        if new == old:
            return []
        commits = self.graph.repo.commits
        try:
            if entry.action == "reset" and self.graph.repo.history.is_ancestor(new, old):
                raise LookupError("backwards")
            chain: list[Commit] = []
            cid: str | None = new
            while cid is not None and cid != old and len(chain) < MAX_WALK:
                commit = commits.get(cid)
                chain.append(commit)
                cid = commit.parents[0] if commit.parents else None
            if cid != old:
                raise LookupError("not a descendant")
        except (LookupError, CommitNotFoundError, GraphLakeError) as exc:
            _log.warning(
                "webhook %s: branch %r moved to %s, which does not descend from "
                "the delivered %s (%s, e.g. a reset); delivering from the new head "
                "on",
                self.hook.name,
                branch,
                new[:12],
                old[:12],
                exc,
            )
            return []
        chain.reverse()
        parents = {c.id: c for c in chain}
        out: list[tuple[Commit, Commit | None]] = []
        for commit in chain:
            first = commit.parents[0] if commit.parents else None
            parent = parents.get(first) if first else None
            if parent is None and first is not None:
                try:
                    parent = commits.get(first)
                except CommitNotFoundError:
                    parent = None
            out.append((commit, parent))
        return out

    def _tag_times(self, names: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name in names:
            tag = self.graph.repo.tags.get(name)
            if tag is not None:
                out[name] = tag.time
        return out

    def _tags(self, state: CursorState) -> None:
        names = self.graph.repo.tags.names()
        gone = set(state.tags) - set(names)
        if gone:
            for name in gone:
                del state.tags[name]
            self._save(state)
        for name in names:
            if name in state.tags or self._stop.is_set():
                continue
            tag = self.graph.repo.tags.get(name)
            if tag is None:
                continue
            if "tag" in self.hook.events and not self._sender.deliver(
                tag_event(self.hook.name, tag)
            ):
                return
            state.tags[name] = tag.time
            self._save(state)

    def _requests(self, state: CursorState) -> None:
        """Deliver the merge request events appended since the cursor, per request in
        seq order; the cursor moves after each one the receiver took."""
        if "merge_request" not in self.hook.events:
            return
        if state.requests is None:
            state.requests = self._request_positions()
            self._save(state)
        positions = state.requests
        for rid in self._reviews.ids():
            done = positions.get(rid, 0)
            if done < 0 or self._stop.is_set():
                continue  # closed or merged before: it never changes again
            request = self._reviews.get(rid)
            wanted = self._matches(request.into)
            for event in request.events[done:]:
                if wanted and not self._sender.deliver(
                    merge_request_event(self.hook.name, request, event)
                ):
                    return
                final = event["kind"] in ("closed", "merged")
                positions[rid] = -event["seq"] if final else event["seq"]
                if wanted or final or event is request.events[-1]:
                    self._save(state)


class WebhookEngine:
    """Every configured webhook's worker (started and stopped with the app)."""

    def __init__(self, graph: Graph, hooks: tuple[Webhook, ...]) -> None:
        self.hooks = hooks
        self.workers = [WebhookWorker(graph, h) for h in hooks]

    def start(self) -> None:
        for worker in self.workers:
            worker.start()

    def stop(self) -> None:
        for worker in self.workers:
            worker._stop.set()  # every thread stops at once, then each is joined
        for worker in self.workers:
            worker.stop()
