"""A webhook's delivery log: one small object per delivery, newest kept, bounded.

Layout under the graph root::

    _graphlake/webhooks/<encode_name(name)>/deliveries/<first_ms:015d>-<delivery>.json

A delivery's record is rewritten (a plain atomic put: only the process delivering it
writes it) after each attempt, so the log shows attempts and the last error while a
delivery is still being retried. Beyond `size` records the oldest are deleted.
"""

from __future__ import annotations

import json
import logging
import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from graphlake.catalog.names import encode_name
from graphlake.catalog.store import ObjectStore
from graphlake.server.webhooks.cursor import WEBHOOKS_DIR

__all__ = ["Delivery", "DeliveryLog", "read_deliveries"]

_log = logging.getLogger(__name__)
_KEY_RE = re.compile(r"\d{15}-[0-9a-f]{32}\.json")


@dataclass
class Delivery:
    id: str
    webhook: str
    event: str
    status: str  # pending | delivered | failed (retried later; never skipped)
    attempts: int
    created: str
    updated: str
    last_error: str | None = None
    last_status_code: int | None = None
    branch: str | None = None
    commit: str | None = None
    tag: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _dir(webhook: str) -> str:
    return f"{WEBHOOKS_DIR}/{encode_name(webhook)}/deliveries"


class DeliveryLog:
    """The log of one webhook (written by the one thread delivering it)."""

    def __init__(self, store: ObjectStore, webhook: str, size: int) -> None:
        self._store = store
        self._dir = _dir(webhook)
        self._size = size
        self._keys: deque[str] = deque(
            k for k in store.list(self._dir) if _KEY_RE.fullmatch(k.rsplit("/", 1)[-1])
        )
        self._trim()

    def key_for(self, created_ms: int, delivery: str) -> str:
        return f"{self._dir}/{created_ms:015d}-{delivery}.json"

    def find(self, delivery: str) -> tuple[str, Delivery] | None:
        """The key and record of delivery `delivery`, if the log still holds it."""
        suffix = f"-{delivery}.json"
        for key in reversed(self._keys):
            if key.endswith(suffix):
                record = _read(self._store, key)
                return (key, record) if record is not None else None
        return None

    def write(self, key: str, record: Delivery) -> None:
        """Write (or rewrite) one record; best effort: a failed write is logged."""
        try:
            self._store.put(key, json.dumps(record.to_dict(), sort_keys=True).encode())
        except Exception:
            _log.warning(
                "webhook %s: could not write delivery log %s", record.webhook, key, exc_info=True
            )
            return
        if key not in self._keys:
            self._keys.append(key)
        self._trim()

    def _trim(self) -> None:
        while len(self._keys) > self._size:
            old = self._keys.popleft()
            try:
                self._store.delete(old)
            except Exception:
                _log.warning("could not delete old delivery log %s", old, exc_info=True)


def read_deliveries(store: ObjectStore, webhooks: list[str], limit: int) -> list[Delivery]:
    """The newest `limit` records of these webhooks, newest first."""
    keys: list[str] = []
    for name in webhooks:
        keys += [k for k in store.list(_dir(name)) if _KEY_RE.fullmatch(k.rsplit("/", 1)[-1])]
    keys.sort(key=lambda k: k.rsplit("/", 1)[-1], reverse=True)
    keys = keys[:limit]

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(keys)))) as pool:
        found = list(pool.map(lambda k: _read(store, k), keys))
    return [d for d in found if d is not None]


def _read(store: ObjectStore, key: str) -> Delivery | None:
    data = store.get(key)
    try:
        return Delivery(**json.loads(data)) if data is not None else None
    except (ValueError, TypeError):
        _log.warning("ignoring a corrupt delivery log %s", key)
        return None
