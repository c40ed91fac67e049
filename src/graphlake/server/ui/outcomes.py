"""What a merge (or revert, cherry-pick) just did, kept for the page it redirects to.

A form post that merges redirects to the commit page (post/redirect/get: reloading that
page merges nothing). What the commit does not record itself, the conflicts a strategy
resolved, waits here under a random id the redirect carries, readable only by the
session that merged, for `TTL_S` seconds; at most `MAX_KEPT` are kept (oldest go first).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

from graphlake.merge.result import MergeResult
from graphlake.server.convert import jsonable

MAX_KEPT = 256
TTL_S = 3600.0
MAX_LISTED = 200  # resolved conflicts kept per merge (the page says how many in all)


class Outcomes:
    def __init__(self, max_kept: int = MAX_KEPT, ttl_s: float = TTL_S) -> None:
        self._max = max_kept
        self._ttl = ttl_s
        self._kept: OrderedDict[str, tuple[str, float, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, session_id: str, result: MergeResult) -> str:
        """The id of a summary of `result` (its outcome and resolved conflicts)."""
        resolved = [
            {
                "table": c.table,
                "key": c.entity_id,
                "kind": c.kind,
                "properties": list(c.properties),
                "resolution": c.resolution,
            }
            for c in result.resolved[:MAX_LISTED]
        ]
        summary = jsonable(
            {
                "outcome": result.outcome,
                "source": result.source,
                "target": result.target,
                "resolved": resolved,
                "resolved_count": len(result.resolved),
            }
        )
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._kept[key] = (session_id, time.monotonic() + self._ttl, summary)
            while len(self._kept) > self._max:
                self._kept.popitem(last=False)
        return key

    def get(self, session_id: str, key: str | None) -> dict[str, Any] | None:
        if not key:
            return None
        with self._lock:
            found = self._kept.get(key)
        if found is None or found[0] != session_id or found[1] < time.monotonic():
            return None
        return found[2]
