"""The schemas a graph's commits name: content-addressed `.pg` texts, parsed on demand.

Every commit records the id of the schema in force at it (`Commit.schema_id`); readers
and writers take the schema of the commit they work on from here. Parsed schemas are
cached per id: a schema object never changes, and parsing is the slow part. Inside a
dry run's scratch scope (storage/scratch.py), `put` keeps the text in memory instead
(at most `UNSTORED_MAX` texts), so a merge preview writes no schema into the root.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from graphlake.catalog.store import ObjectStore
from graphlake.storage import layout, scratch

UNSTORED_MAX = 256

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.schema.model import Schema


class SchemaStore:
    """Reads and stores the schema texts under `_graphlake/schemas/`."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store
        self._parsed: dict[str, Schema] = {}
        self._unstored: dict[str, str] = {}  # dry runs' schemas, by id (oldest first)
        self._lock = threading.Lock()

    def text(self, schema_id: str) -> str:
        with self._lock:
            unstored = self._unstored.get(schema_id)
        return unstored if unstored is not None else layout.get_schema(self._store, schema_id)

    def is_stored(self, schema_id: str) -> bool:
        """False for a dry run's schema kept in memory only (see `put`)."""
        with self._lock:
            return schema_id not in self._unstored

    def get(self, schema_id: str) -> Schema:
        """The parsed schema `schema_id` names (GraphLakeError if it is missing)."""
        with self._lock:
            found = self._parsed.get(schema_id)
        if found is not None:
            return found
        from graphlake.schema.parser import parse_schema  # not on the CLI's start-up path

        parsed = parse_schema(self.text(schema_id), stored=True)
        with self._lock:
            self._parsed[schema_id] = parsed
        return parsed

    def of(self, commit: Commit) -> Schema:
        """The schema in force at `commit`."""
        return self.get(commit.schema_id)

    def put(self, text: str) -> str:
        """Store `text` (idempotent: the id is its hash) and return its id; in a dry
        run's scratch scope, keep it in memory only."""
        if scratch.current() is None:
            return layout.put_schema(self._store, text)
        sid = layout.schema_id(text)
        with self._lock:
            self._unstored[sid] = text
            while len(self._unstored) > UNSTORED_MAX:
                del self._unstored[next(iter(self._unstored))]
        return sid
