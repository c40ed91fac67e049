"""Completed graph algorithm answers, kept so the next page of one does not run it again.

`POST /branches/{b}/algo/{name}` answers a slice (`offset`, `limit`) of an answer that
can have a row per node; paging through it would run the algorithm once per page. An
answer depends only on the commit, the algorithm, the edge type and the parameters, so it
is kept under that key (the branch's head at the request, resolved to its commit: a
write moves the head and the next request runs again). Bounded by the answers' Arrow
bytes (`algo_cache_mb`), least recently used out first; an answer larger than the
whole budget is not kept (each page then runs it, as before). Thread-safe.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

Key = tuple[str, str, str, str]


def answer_key(commit: str, algorithm: str, edge_type: str, params: Mapping[str, object]) -> Key:
    return (commit, algorithm, edge_type, json.dumps(dict(params), sort_keys=True))


class AnswerCache:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._items: OrderedDict[Key, pa.Table] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def get(self, key: Key) -> pa.Table | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Key, table: pa.Table) -> bool:
        """Keep `table` under `key` (evicting the least recently used); False when it is
        larger than the whole budget (not kept)."""
        size = table.nbytes
        if size > self.budget_bytes:
            return False
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = table
            self._bytes += size
            while self._bytes > self.budget_bytes:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes
        return True
