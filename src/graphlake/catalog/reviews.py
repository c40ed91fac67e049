"""Merge requests: a proposed merge of one branch into another, kept as an event list.

Layout under the graph root (plain objects, so local folders and S3 behave the same)::

    _graphlake/reviews/<id:08d>/<seq:08d>.json    event seq (1: "opened")

A request is the fold of its events; an event is never changed. Every state change
(opened, approved, commented, closed, merged) *creates* the next event object with a
conditional create, as refs move (refs.py): of two writers appending event N+1 exactly
one succeeds, the other re-reads the request, checks its change still applies (a request
merged meanwhile cannot be approved) and appends N+2. So no update is ever lost and no
overwrite is needed. A request's id is the next free number, claimed the same way (the
create of its event 1). Requests are not data commits: they never move a ref.

`ReviewStore.append` is the one place a request changes; `on_change` callbacks (webhooks)
are called after each appended event.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphlake.catalog.commits import utc_now
from graphlake.catalog.store import ObjectStore
from graphlake.errors import (
    ConcurrentWriteError,
    GraphLakeError,
    ReviewError,
    ReviewNotFoundError,
    ReviewStateError,
)

__all__ = ["EVENT_KINDS", "REVIEWS_DIR", "STATES", "Approval", "MergeRequest", "ReviewStore"]

REVIEWS_DIR = "_graphlake/reviews"
OPEN, MERGED, CLOSED = "open", "merged", "closed"
STATES = (OPEN, MERGED, CLOSED)
EVENT_KINDS = ("opened", "approved", "commented", "closed", "merged")
MAX_TITLE = 500
MAX_TEXT = 20_000
# Each lost append means another event landed; a request rarely sees this many at once.
_MAX_RETRIES = 64
_ID_RE = re.compile(r"\d{8}")
_SEQ_RE = re.compile(r"(\d{8})\.json")


@dataclass(frozen=True)
class Approval:
    """One approval, valid while both branches stay at the heads it saw."""

    by: str
    time: str
    source_head: str
    target_head: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class MergeRequest:
    id: int
    title: str
    description: str
    source: str
    into: str
    author: str
    created: str
    state: str = OPEN
    updated: str = ""
    merge_commit: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    # The MergeResult of the merge that just merged it (in memory only, not stored).
    result: Any = field(default=None, compare=False, repr=False)

    @property
    def approvals(self) -> list[Approval]:
        """Every approval given (latest per person); `current_approvals` filters by heads."""
        latest: dict[str, Approval] = {}
        for e in self.events:
            if e["kind"] == "approved":
                latest[e["by"]] = Approval(e["by"], e["time"], e["source_head"], e["target_head"])
        return list(latest.values())

    def current_approvals(self, source_head: str, target_head: str) -> list[Approval]:
        """Approvals given at these heads: a new commit on either branch resets them."""
        return [
            a
            for a in self.approvals
            if (a.source_head, a.target_head) == (source_head, target_head)
        ]

    @property
    def comments(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["kind"] == "commented"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "source": self.source,
            "into": self.into,
            "author": self.author,
            "created": self.created,
            "updated": self.updated,
            "state": self.state,
            "merge_commit": self.merge_commit,
            "approvals": [a.to_dict() for a in self.approvals],
            "events": [dict(e) for e in self.events],
        }


def _fold(rid: int, events: list[dict[str, Any]]) -> MergeRequest:
    first = events[0]
    if first.get("kind") != "opened":
        raise GraphLakeError(f"merge request {rid} is corrupt: event 1 is not 'opened'")
    mr = MergeRequest(
        rid,
        first["title"],
        first.get("description", ""),
        first["source"],
        first["into"],
        first["by"],
        first["time"],
        updated=first["time"],
    )
    for e in events:
        mr.updated = e["time"]
        if e["kind"] == "closed":
            mr.state = CLOSED
        elif e["kind"] == "merged":
            mr.state, mr.merge_commit = MERGED, e.get("commit")
    mr.events = events
    return mr


def _text(value: Any, what: str, limit: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()) or len(value) > limit:
        raise ReviewError(
            f"a merge request's {what} is a {'' if empty else 'non-empty '}"
            f"string of at most {limit} characters"
        )
    return value


class ReviewStore:
    """The merge requests of one graph, in its object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self.on_change: list[Callable[[MergeRequest, dict[str, Any]], None]] = []

    @staticmethod
    def _key(rid: int, seq: int) -> str:
        return f"{REVIEWS_DIR}/{rid:08d}/{seq:08d}.json"

    def ids(self) -> list[int]:
        leaves = (d.rsplit("/", 1)[-1] for d in self._store.list_dirs(REVIEWS_DIR))
        return sorted(int(d) for d in leaves if _ID_RE.fullmatch(d))

    def _events(self, rid: int) -> list[dict[str, Any]]:
        out = []
        for key in self._store.list(f"{REVIEWS_DIR}/{rid:08d}"):
            match = _SEQ_RE.fullmatch(key.rsplit("/", 1)[-1])
            if match is None:
                continue  # not ours: ignored
            data = self._store.get(key)
            if data is None:
                continue
            try:
                event = json.loads(data)
            except ValueError as exc:
                raise GraphLakeError(f"merge request event {key} is corrupt: {exc}") from exc
            event.pop("nonce", None)
            out.append(event)
        out.sort(key=lambda e: e["seq"])
        if [e["seq"] for e in out] != list(range(1, len(out) + 1)):
            raise GraphLakeError(f"merge request {rid} has a gap in its events")
        return out

    def get(self, rid: int) -> MergeRequest:
        """The request `rid`; `ReviewNotFoundError` if there is none."""
        if isinstance(rid, bool) or not isinstance(rid, int) or not 0 < rid < 10**8:
            raise ReviewNotFoundError(f"no merge request {rid!r}: ids are positive integers")
        events = self._events(rid)
        if not events:
            raise ReviewNotFoundError(f"no merge request {rid}")
        return _fold(rid, events)

    def list(self, state: str | None = None) -> builtins.list[MergeRequest]:
        if state is not None and state not in STATES:
            raise ReviewError(
                f"unknown merge request state {state!r} (use one of: {', '.join(STATES)})"
            )
        found = [self.get(rid) for rid in self.ids()]
        return [mr for mr in found if state is None or mr.state == state]

    def open(self, source: str, into: str, title: str, description: str, by: str) -> MergeRequest:
        """A new request with the next free id (claimed by a conditional create)."""
        title = _text(title, "title", MAX_TITLE)
        description = _text(description, "description", MAX_TEXT, empty=True)
        body = {
            "kind": "opened",
            "source": source,
            "into": into,
            "title": title,
            "description": description,
        }
        ids = self.ids()
        rid = (ids[-1] if ids else 0) + 1
        for _ in range(_MAX_RETRIES):
            event = self._create(rid, 1, by, body)
            if event is not None:
                mr = _fold(rid, [event])
                self._notify(mr, event)
                return mr
            rid += 1  # another request took this id
        raise ConcurrentWriteError("could not claim a merge request id: too many at once")

    def append(
        self,
        rid: int,
        kind: str,
        by: str,
        data: dict[str, Any] | None = None,
        check: Callable[[MergeRequest], None] | None = None,
    ) -> MergeRequest:
        """Append one event to an open request: the single place a request changes.

        `check` runs on the request as it stands before each attempt (and again after a
        lost race) and raises to refuse the change; nothing is written then."""
        if kind not in EVENT_KINDS or kind == "opened":
            raise ValueError(f"not an event kind: {kind!r}")
        for _ in range(_MAX_RETRIES):
            mr = self.get(rid)
            self.check_open(mr, kind)
            if check is not None:
                check(mr)
            event = self._create(rid, len(mr.events) + 1, by, {"kind": kind, **(data or {})})
            if event is not None:
                mr = _fold(rid, [*mr.events, event])
                self._notify(mr, event)
                return mr
        raise ConcurrentWriteError(f"merge request {rid} changed too often at once; retry")

    @staticmethod
    def check_open(mr: MergeRequest, doing: str) -> None:
        """`ReviewStateError` unless `mr` is open."""
        if mr.state != OPEN:
            what = f"merged as {mr.merge_commit[:12]}" if mr.merge_commit else mr.state
            raise ReviewStateError(
                f"merge request {mr.id} is {what}: it cannot be {doing} any more"
            )

    def _create(self, rid: int, seq: int, by: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """Create event `seq` of `rid`: the event, or None if another writer has it."""
        from ulid import ULID  # python-ulid reads package metadata on import

        event = {**body, "seq": seq, "by": by, "time": utc_now()}
        data = json.dumps(
            {**event, "nonce": str(ULID())}, sort_keys=True, separators=(",", ":")
        ).encode("utf-8")
        key = self._key(rid, seq)
        # A False after a transport retry may be our own first attempt: the nonce tells.
        if self._store.create(key, data) or self._store.get(key) == data:
            return event
        return None

    def _notify(self, mr: MergeRequest, event: dict[str, Any]) -> None:
        for callback in list(self.on_change):
            callback(mr, event)
