"""Tables on Lance: one dataset per node or edge type, addressed by exact (branch, version).

A graph branch appends only to a Lance branch it owns (`TableState.owner` equals its
incarnation) and whose head is exactly the version the graph commit shows; every Lance
commit goes through a compare-and-swap lock, so a racing writer can never slip rows into
a version that another graph commit publishes. Anything else forks a new, uniquely named
Lance branch from the exact state (lazy first-touch).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import lance
import pyarrow as pa
from ulid import ULID

from graphlake.catalog.commits import TableState
from graphlake.errors import GraphLakeError

# Fragments of this size keep a one-row delete or update cheap at millions of rows
# (a delete rewrites one fragment's deletion file; measured ~10 ms at 1M rows).
MAX_ROWS_PER_FILE = 128 * 1024
# Appending at least this many rows extends the scalar indexes right away; smaller
# appends stay unindexed (cheap to scan) until `optimize`.
INDEX_APPEND_THRESHOLD = 50_000
MAIN = "main"


class LanceCasError(GraphLakeError):
    """The Lance branch moved past the version we built on (another writer, or a crash)."""


class _CasLock:
    """A Lance commit lock that only admits the next version after the one we read."""

    def __init__(self) -> None:
        self.expected: int | None = None
        self.refused = False

    @contextlib.contextmanager
    def __call__(self, version: int) -> Iterator[None]:
        if self.expected is not None and version != self.expected:
            self.refused = True
            raise RuntimeError(f"graphlake CAS: version {version} != expected {self.expected}")
        yield


class TableStore:
    """Creates, opens, forks and writes the Lance datasets of one graph root."""

    def __init__(self, root_uri: str, storage_options: dict[str, str] | None = None):
        self.root_uri = root_uri.rstrip("/")
        self.storage_options = storage_options
        self._cache: OrderedDict[tuple[str, str, int], lance.LanceDataset] = OrderedDict()
        self._cache_lock = threading.Lock()

    # --- addressing -------------------------------------------------------------------

    def uri(self, table_id: str) -> str:
        return f"{self.root_uri}/tables/{table_id}.lance"

    def _open_latest(self, table_id: str, commit_lock: Any = None) -> lance.LanceDataset:
        return lance.dataset(
            self.uri(table_id), storage_options=self.storage_options, commit_lock=commit_lock
        )

    # --- lifecycle --------------------------------------------------------------------

    def create(
        self, table_id: str, schema: pa.Schema, index_columns: list[str], owner: str
    ) -> TableState:
        """Create an empty table on Lance main with stable row ids and BTREE indexes."""
        ds = lance.write_dataset(
            schema.empty_table(),
            self.uri(table_id),
            mode="create",
            enable_stable_row_ids=True,
            max_rows_per_file=MAX_ROWS_PER_FILE,
            storage_options=self.storage_options,
        )
        for column in index_columns:
            ds.create_scalar_index(column, "BTREE")
        return TableState(table_id=table_id, lance_branch=MAIN, version=ds.version, owner=owner)

    def open(self, state: TableState) -> lance.LanceDataset:
        """The dataset pinned at exactly `state` (cached: a state never changes)."""
        key = (state.table_id, state.lance_branch, state.version)
        with self._cache_lock:
            ds = self._cache.get(key)
            if ds is not None:
                self._cache.move_to_end(key)
                return ds
        ds = self._checkout(self._open_latest(state.table_id), state)
        with self._cache_lock:
            self._cache[key] = ds
            while len(self._cache) > 256:
                self._cache.popitem(last=False)
        return ds

    @staticmethod
    def _checkout(ds: lance.LanceDataset, state: TableState) -> lance.LanceDataset:
        if state.lance_branch == MAIN and ds.version == state.version:
            return ds
        return ds.checkout_version((state.lance_branch, state.version))

    def fork(self, state: TableState, owner: str) -> TableState:
        """A new Lance branch at exactly `state`, owned by `owner` (unique name)."""
        name = f"gl-{ULID()}".lower()
        ds = self._open_latest(state.table_id)
        ds.create_branch(name, (state.lance_branch, state.version))
        return TableState(
            table_id=state.table_id, lance_branch=name, version=state.version, owner=owner
        )

    def branch_head_version(self, state: TableState) -> int:
        ds = self._open_latest(state.table_id).checkout_version((state.lance_branch, None))
        return ds.version

    # --- writing ----------------------------------------------------------------------

    def apply(
        self,
        state: TableState,
        delete_ids: list[str] | None,
        delete_all: bool,
        append: pa.Table | None,
        index_columns: list[str],
    ) -> TableState:
        """Delete then append on the owned Lance branch at `state`, each commit CAS-checked.

        Raises `LanceCasError` if the branch head is not `state.version` (or moves while
        we write); the caller forks and retries. Versions written before such a failure
        are unreferenced and invisible to every graph commit.
        """
        lock = _CasLock()
        ds = self._checkout(self._open_latest(state.table_id, commit_lock=lock), state)
        try:
            if delete_all:
                lock.expected = ds.version + 1
                ds.delete("true")
            elif delete_ids:
                for chunk in _chunks(delete_ids, 4096):
                    lock.expected = ds.version + 1
                    ds.delete(f"id IN ({_sql_list(chunk)})")
            if append is not None and append.num_rows:
                lock.expected = ds.version + 1
                ds.insert(append, max_rows_per_file=MAX_ROWS_PER_FILE)
                if append.num_rows >= INDEX_APPEND_THRESHOLD and index_columns:
                    lock.expected = ds.version + 1
                    ds.optimize.optimize_indices(num_indices_to_merge=0)
        except OSError as exc:
            if lock.refused:
                raise LanceCasError(
                    f"table {state.table_id}: Lance branch {state.lance_branch} moved"
                ) from exc
            raise
        return TableState(
            table_id=state.table_id,
            lance_branch=state.lance_branch,
            version=ds.version,
            owner=state.owner,
        )


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def sql_literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _sql_list(values: list[str]) -> str:
    return ", ".join(sql_literal(v) for v in values)
