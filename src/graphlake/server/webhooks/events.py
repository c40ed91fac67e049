"""What a webhook says: one event per commit a branch gains (first-parent order), one
per new tag and one per merge request event (opened, approved, commented, closed,
merged), as a JSON-able payload, plus the delivery id that names it.

The payload of a `commit` or `merge` event is built from the commit alone (and its first
parent, to name the tables it changed), so it costs no table read. `op` says what made
the commit: `merge` (two or more parents), `revert`, `cherry-pick`, `schema`, `optimize`,
`ingest`, `backfill`, or `write`; `moved_by` is the action of the branch move that
brought it (`write`, `merge`, `merge (fast-forward)`, `reset`, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphlake.catalog.commits import Commit
from graphlake.catalog.reviews import CLOSED, MERGED, OPEN, MergeRequest
from graphlake.catalog.tags import Tag

__all__ = ["Event", "commit_event", "commit_op", "merge_request_event", "tag_event"]

# Commit meta keys that name the operation (write/backfill.py, merge/apply.py,
# write/schema_apply.py, write/optimize.py, ingestion/worker.py).
_META_OPS = (
    ("reverted", "revert"),
    ("cherry_picked_from", "cherry-pick"),
    ("schema_change", "schema"),
    ("optimize", "optimize"),
    ("ingest_run", "ingest"),
    ("backfill", "backfill"),
)


@dataclass(frozen=True)
class Event:
    """One event for one webhook: its name, its payload and its delivery id (the same
    event always gets the same id, so a receiver can drop a repeat)."""

    name: str
    payload: Mapping[str, Any]
    delivery: str

    def body(self) -> bytes:
        """The exact bytes POSTed (and signed)."""
        return json.dumps(
            {"event": self.name, "delivery": self.delivery, **self.payload},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode("utf-8")


def _delivery_id(webhook: str, *parts: str) -> str:
    text = "\x1f".join((webhook, *parts))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def commit_op(commit: Commit) -> str:
    if len(commit.parents) > 1:
        return "merge"
    for key, op in _META_OPS:
        if key in commit.meta:
            return op
    return "write"


def commit_event(
    webhook: str, branch: str, commit: Commit, parent: Commit | None, moved_by: str | None, seq: int
) -> Event:
    """The `commit` (or `merge`, for a commit with several parents) event of `commit`
    joining `branch`'s first-parent history through the ref entry `seq`."""
    name = "merge" if len(commit.parents) > 1 else "commit"
    changed = sorted(
        t for t, state in commit.tables.items() if parent is None or parent.tables.get(t) != state
    )
    if parent is not None:
        changed += sorted(set(parent.tables) - set(commit.tables))
    payload: dict[str, Any] = {
        "branch": branch,
        "commit": commit.id,
        "parents": list(commit.parents),
        "author": commit.author_text,
        "time": commit.time,
        "message": commit.message,
        "op": commit_op(commit),
        "moved_by": moved_by,
        "tables_changed": changed,
        "schema_changed": parent is not None and parent.schema_id != commit.schema_id,
    }
    rows = commit.meta.get("rows")
    if isinstance(rows, int) and not isinstance(rows, bool):
        payload["rows"] = rows  # an ingest commit records the rows it wrote
    return Event(name, payload, _delivery_id(webhook, name, branch, commit.id, str(seq)))


def tag_event(webhook: str, tag: Tag) -> Event:
    payload = {
        "tag": tag.name,
        "commit": tag.commit,
        "time": tag.time,
        "author": str(tag.author) if tag.author else "unknown",
        "message": tag.message,
    }
    return Event("tag", payload, _delivery_id(webhook, "tag", tag.name, tag.commit, tag.time))


# Fields of a merge request event that the payload names itself (the rest, e.g. an
# approval's heads, a comment's text, a merge's commit and outcome, are passed on).
_REQUEST_FIELDS = ("kind", "seq", "by", "time", "source", "into", "title")


def merge_request_event(webhook: str, request: MergeRequest, event: Mapping[str, Any]) -> Event:
    """The `merge_request` event of `request`'s stored event `event` (catalog/reviews.py):
    `action` is its kind, `state` the request's state right after it. The delivery id
    names (request, event seq): a restart that sends it again sends the same id."""
    kind = str(event["kind"])
    state = {"closed": CLOSED, "merged": MERGED}.get(kind, OPEN)
    payload: dict[str, Any] = {
        "action": kind,
        "request": request.id,
        "title": request.title,
        "source": request.source,
        "into": request.into,
        "branch": request.into,
        "author": request.author,
        "state": state,
        "seq": event["seq"],
        "by": event["by"],
        "time": event["time"],
    }
    payload.update({k: v for k, v in event.items() if k not in _REQUEST_FIELDS})
    key = f"{request.id}:{event['seq']}"
    return Event("merge_request", payload, _delivery_id(webhook, "merge_request", key))
