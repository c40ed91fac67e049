"""The data checks a graph's commits name: content-addressed JSON documents.

A data check is a named read query (Cypher or SQL) that passes when it returns no rows.
The set in force at a commit is one document, `{name: {"language": "cypher" | "sql",
"query": text}}`, stored under `_graphlake/data_checks/<id>.json` (the id is the hash of
its canonical JSON) and named by `Commit.checks_id`, as `schema_id` names the schema.
A commit with no data checks has `checks_id` None. Inside a dry run's scratch scope
(storage/scratch.py), `put` keeps the document in memory only (at most `UNSTORED_MAX`),
so a merge preview writes nothing into the root.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphLakeError
from graphlake.storage import scratch

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit

__all__ = ["Checks", "DataCheckStore", "checks_id"]

UNSTORED_MAX = 256
_DIR = "_graphlake/data_checks"

# name -> {"language": "cypher" | "sql", "query": text}
Checks = dict[str, dict[str, str]]


def _canonical(checks: Mapping[str, Mapping[str, str]]) -> bytes:
    plain = {name: dict(spec) for name, spec in checks.items()}
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def checks_id(checks: Mapping[str, Mapping[str, str]]) -> str:
    return hashlib.sha256(_canonical(checks)).hexdigest()[:40]


class DataCheckStore:
    """Reads and stores the data-check documents under `_graphlake/data_checks/`."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._cache: dict[str, Checks] = {}
        self._unstored: dict[str, Checks] = {}  # dry runs' merged sets, by id
        self._lock = threading.Lock()

    def get(self, cid: str | None) -> Checks:
        """The checks `cid` names ({} for None); GraphLakeError if the document is missing."""
        if cid is None:
            return {}
        with self._lock:
            found = self._cache.get(cid) or self._unstored.get(cid)
        if found is None:
            raw = self._store.get(f"{_DIR}/{cid}.json")
            if raw is None:
                raise GraphLakeError(f"data checks {cid} are missing from {self._store.root_uri}")
            found = json.loads(raw)
            if checks_id(found) != cid:
                raise GraphLakeError(
                    f"data checks {cid} are corrupt (their content hashes otherwise)"
                )
            with self._lock:
                self._cache[cid] = found
        return {name: dict(spec) for name, spec in found.items()}

    def of(self, commit: Commit) -> Checks:
        return self.get(commit.checks_id)

    def put(self, checks: Mapping[str, Mapping[str, str]]) -> str | None:
        """Store `checks` (idempotent) and return their id; None for no checks. In a dry
        run's scratch scope, keep them in memory only."""
        if not checks:
            return None
        cid = checks_id(checks)
        plain = {name: dict(spec) for name, spec in checks.items()}
        if scratch.current() is not None:
            with self._lock:
                self._unstored[cid] = plain
                while len(self._unstored) > UNSTORED_MAX:
                    del self._unstored[next(iter(self._unstored))]
            return cid
        self._store.create(f"{_DIR}/{cid}.json", _canonical(plain))
        with self._lock:
            self._cache[cid] = plain
        return cid
