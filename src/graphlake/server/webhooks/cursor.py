"""A webhook's persisted position: per branch the ref entry (and commit) it has delivered
up to, the tags it has announced, and per merge request the last event it delivered.

Layout under the graph root (through the catalog's `ObjectStore`: local folder or S3)::

    _graphlake/webhooks/<encode_name(name)>/cursor/<seq:020d>.json

Like a branch ref, the cursor is a sequence of objects, each made by conditional create:
saving position N+1 succeeds only if nobody else saved N+1 first, so two servers
delivering the same webhook never overwrite each other's position silently (the loser
reloads; its delivery was a repeat, which at-least-once allows). Older positions are
deleted after a save (the last two are kept).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from graphlake.catalog.names import encode_name
from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphLakeError

__all__ = ["WEBHOOKS_DIR", "BranchPosition", "CursorMoved", "CursorState", "CursorStore"]

WEBHOOKS_DIR = "_graphlake/webhooks"
_SEQ_RE = re.compile(r"(\d{20})\.json")


class CursorMoved(GraphLakeError):
    """Another process saved the webhook's cursor first."""


@dataclass
class BranchPosition:
    seq: int  # the branch's ref entry delivered up to
    commit: str
    incarnation: str

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "commit": self.commit, "incarnation": self.incarnation}


@dataclass
class CursorState:
    since: str  # when the webhook started (branches created before: from their head then)
    branches: dict[str, BranchPosition] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)  # name -> its time (a re-made tag
    # has a new time)
    # Merge request id -> the seq of its last event delivered (or passed over), negative
    # once that event closed or merged it (it never changes again: not read any more).
    # None: a cursor saved before merge requests were followed (the engine sets it).
    requests: dict[int, int] | None = None

    def to_json(self) -> bytes:
        body: dict[str, Any] = {
            "since": self.since,
            "branches": {b: p.to_dict() for b, p in sorted(self.branches.items())},
            "tags": dict(sorted(self.tags.items())),
        }
        if self.requests is not None:
            body["requests"] = {str(r): s for r, s in sorted(self.requests.items())}
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, where: str) -> CursorState:
        try:
            obj = json.loads(data)
            branches = {
                str(b): BranchPosition(int(p["seq"]), str(p["commit"]), str(p["incarnation"]))
                for b, p in obj["branches"].items()
            }
            tags = {str(k): str(v) for k, v in obj["tags"].items()}
            found = obj.get("requests")
            requests = None if found is None else {int(r): int(s) for r, s in found.items()}
            return cls(str(obj["since"]), branches, tags, requests)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise GraphLakeError(f"webhook cursor {where} is corrupt: {exc}") from exc


class CursorStore:
    """The cursor of one webhook."""

    def __init__(self, store: ObjectStore, webhook: str) -> None:
        self._store = store
        self.dir = f"{WEBHOOKS_DIR}/{encode_name(webhook)}/cursor"

    def _key(self, seq: int) -> str:
        return f"{self.dir}/{seq:020d}.json"

    def _seqs(self) -> list[int]:
        found = (_SEQ_RE.fullmatch(k.rsplit("/", 1)[-1]) for k in self._store.list(self.dir))
        return sorted(int(m.group(1)) for m in found if m)

    def load(self) -> tuple[int, CursorState] | None:
        """(seq, state) of the newest saved position; None if it was never saved."""
        for seq in reversed(self._seqs()):
            data = self._store.get(self._key(seq))
            if data is not None:
                return seq, CursorState.from_json(data, self._key(seq))
        return None

    def save(self, state: CursorState, after: int) -> int:
        """Save `state` as the position after `after` (0: the first); its seq.
        `CursorMoved` if another process saved that position first."""
        seq = after + 1
        data = state.to_json()
        if not self._store.create(self._key(seq), data) and self._store.get(self._key(seq)) != data:
            raise CursorMoved(f"the cursor in {self.dir} moved past {after}")
        if after >= 2:
            self._store.delete(self._key(after - 1))
        return seq
