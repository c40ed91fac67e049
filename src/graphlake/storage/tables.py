"""Tables on Lance: one dataset per node or edge type, addressed by exact (branch, version).

A graph branch appends only to a Lance branch it owns (`TableState.owner` equals its
incarnation) and whose head is exactly the version the graph commit shows; every Lance
commit goes through a compare-and-swap lock, so a racing writer can never slip rows into
a version that another graph commit publishes. Anything else forks a new, uniquely named
Lance branch from the exact state (lazy first-touch).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import lance
import pyarrow as pa
from ulid import ULID

from graphlake import faults
from graphlake.catalog.commits import TableState
from graphlake.catalog.store import ObjectStore
from graphlake.errors import GraphLakeError
from graphlake.sqltext import string_literal
from graphlake.storage import scratch, search_indexes
from graphlake.storage.columns import replace_column

if TYPE_CHECKING:
    from graphlake.schema.model import EdgeType, NodeType

_log = logging.getLogger(__name__)

# Fragments of this size keep a one-row delete or update cheap at millions of rows
# (a delete rewrites one fragment's deletion file; measured ~10 ms at 1M rows).
MAX_ROWS_PER_FILE = 128 * 1024
REPORT_BATCH_ROWS = 16 * 1024  # granularity of `on_rows_written`
# Appending at least this many rows extends the scalar indexes right away; smaller
# appends stay unindexed (cheap to scan) until `optimize`.
INDEX_APPEND_THRESHOLD = 50_000
# ... or until this many fragments are outside the indexes: every keyed read scans the
# unindexed fragments, so many one-row commits would make each later one slower. The
# refresh indexes only those fragments, as a new delta segment (merging into an existing
# segment rewrites it: O(rows)); measured ~20-50 ms for 16-60 one-row fragments at 1M.
INDEX_REFRESH_FRAGMENTS = 16
# A delete of at most this many keys, found (through the index) in at most
# `TARGETED_DELETE_FRAGMENTS` fragments, rewrites only those fragments' deletion files.
# `LanceDataset.delete` costs more with the table's rows and its deletion files (measured
# 15 ms growing to 55 ms at 1M rows over 30 one-row commits; the targeted form ~12 ms flat).
TARGETED_DELETE_KEYS = 256
TARGETED_DELETE_FRAGMENTS = 8
# One cache of index pages and file metadata for every dataset a store opens: each
# commit opens a new version, and without it every keyed read re-loads the BTREE pages.
# Lance files are immutable (unique names), so sharing across versions is safe.
SESSION_INDEX_CACHE_BYTES = 512 * 2**20
SESSION_METADATA_CACHE_BYTES = 256 * 2**20
MAIN = "main"


class LanceCasError(GraphLakeError):
    """The Lance branch moved past the version we built on (another writer, or a crash)."""


class _CasLock:
    """A Lance commit handler that admits exactly the version after the one we read, once.

    Lance calls it right before writing a version's manifest, and a custom handler
    REPLACES Lance's own atomic commit: a version check alone lets two racing writers
    both write version N (the later manifest silently replaces the earlier; seen in a
    two-process test). So each version is also claimed with a conditional create in the
    graph's object store (O_EXCL locally, If-None-Match on S3): exactly one writer can
    claim (table, Lance branch, version). A claim left by a crashed writer only makes
    the next writer fork, never lose data.
    """

    def __init__(self, claim: Callable[[int], bool]) -> None:
        self.expected: int | None = None
        self.refused = False
        self._claim = claim

    @contextlib.contextmanager
    def __call__(self, version: int) -> Iterator[None]:
        if self.expected is not None and version != self.expected:
            self.refused = True
            raise RuntimeError(f"graphlake CAS: version {version} != expected {self.expected}")
        if not self._claim(version):
            self.refused = True
            raise RuntimeError(f"graphlake CAS: version {version} was claimed by another writer")
        # Operations that commit several versions in a row (compaction reserves fragment
        # ids, then rewrites) may go on with the next one, and only the next one.
        if self.expected is not None:
            self.expected = version + 1
        yield


def index_columns(t: NodeType | EdgeType) -> list[str]:
    """The columns a table keeps Lance scalar indexes on: `id` (and `src`/`dst` of an
    edge), then the properties of `@unique` and `@index` groups that a BTree can index
    (not vectors, blobs or lists). One rule for `init`, schema changes and publishing."""
    cols = ["id", "src", "dst"] if t.is_edge else ["id"]
    for group in (*t.uniques, *t.indexes):
        for c in group:
            p = t.property(c)
            if c not in cols and p is not None and p.type.kind not in ("Vector", "Blob", "List"):
                cols.append(c)
    return cols


class TableStore:
    """Creates, opens, forks and writes the Lance datasets of one graph root."""

    def __init__(
        self,
        root_uri: str,
        claims: ObjectStore,
        storage_options: dict[str, str] | None = None,
    ):
        self.root_uri = root_uri.rstrip("/")
        self.claims = claims  # where Lance versions are claimed (see _CasLock)
        self.storage_options = storage_options
        self._cache: OrderedDict[tuple[str, str, int], lance.LanceDataset] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._session = lance.Session(
            index_cache_size_bytes=SESSION_INDEX_CACHE_BYTES,
            metadata_cache_size_bytes=SESSION_METADATA_CACHE_BYTES,
        )
        # Whether a large append (>= INDEX_APPEND_THRESHOLD rows) extends the scalar
        # indexes right away. The workers of a multi-worker ingest turn it off for their
        # shard branches: merge_many adopts the shards' fragments with fresh row ids and
        # indexes them in the target, so index segments built on a shard are never read
        # by `main` (measured ~45 ms per 100k-row commit). The fragment-count refresh
        # (INDEX_REFRESH_FRAGMENTS) still applies, so keyed probes on a long-running
        # shard scan a bounded number of unindexed fragments.
        self.index_large_appends = True
        # Called with the number of rows Lance has taken of an append so far, batch by
        # batch while it writes (an ingest worker's progress); None: appends go as they are.
        self.on_rows_written: Callable[[int], None] | None = None

    # --- addressing -------------------------------------------------------------------

    def uri(self, table_id: str) -> str:
        return f"{self.root_uri}/tables/{table_id}.lance"

    def cas_lock(self, table_id: str, lance_branch: str) -> _CasLock:
        """A commit handler for writes to one Lance branch of one table."""
        prefix = f"_graphlake/claims/{table_id}/{lance_branch}"
        scope = scratch.current()
        if scope is not None and scope.owns(table_id, lance_branch):
            # A dry run's own fork: no one else writes it, claims stay in memory.
            return _CasLock(lambda version: scope.claim(table_id, lance_branch, version))

        def claim(version: int) -> bool:
            return self.claims.create(f"{prefix}/{version:020d}", b"")

        return _CasLock(claim)

    def _open_latest(self, table_id: str, commit_lock: Any = None) -> lance.LanceDataset:
        return lance.dataset(
            self.uri(table_id),
            storage_options=self.storage_options,
            commit_lock=commit_lock,
            session=self._session,
        )

    # --- lifecycle --------------------------------------------------------------------

    def create(
        self,
        table_id: str,
        schema: pa.Schema,
        index_columns: list[str],
        owner: str,
        text_columns: Sequence[str] = (),
    ) -> TableState:
        """Create an empty table on Lance main with stable row ids, BTREE indexes and
        the full-text indexes of `text_columns` (`@search`)."""
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
        if text_columns:
            search_indexes.create_text_indexes(ds, text_columns)
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
        scope = scratch.current()
        if scope is not None:  # a dry run: deleted when it ends (storage/scratch.py)
            scope.forks.append((state.table_id, name))
        return TableState(
            table_id=state.table_id, lance_branch=name, version=state.version, owner=owner
        )

    @contextlib.contextmanager
    def dry_run_scope(self) -> Iterator[scratch.Scratch]:
        """Run a dry run inside (storage/scratch.py): the Lance branches forked in it are
        deleted when it ends, whether the dry run returned or raised."""
        with scratch.scope() as scope:
            try:
                yield scope
            finally:
                for table_id, branch in reversed(scope.forks):  # children before parents
                    try:
                        self.delete_branch(table_id, branch)
                    except Exception:  # never hide the dry run's own result or error
                        _log.warning(
                            "dry run: could not delete scratch branch %s of %s",
                            branch,
                            table_id,
                            exc_info=True,
                        )

    def delete_branch(self, table_id: str, lance_branch: str) -> None:
        """Delete a Lance branch no table state of any commit names (a dry run's fork)."""
        self._open_latest(table_id).branches.delete(lance_branch)
        with self._cache_lock:
            for key in [k for k in self._cache if k[:2] == (table_id, lance_branch)]:
                del self._cache[key]

    def branch_head_version(self, state: TableState) -> int:
        ds = self._open_latest(state.table_id).checkout_version((state.lance_branch, None))
        return ds.version

    def cas_failure(self, state: TableState, lock: _CasLock, exc: OSError) -> LanceCasError:
        """`LanceCasError` if a write at `state` failed because its Lance branch moved
        (our lock refused, or Lance's own conflict check saw the newer versions first);
        otherwise re-raises `exc`.

        Lance checks the versions committed after the one we read *before* it asks our
        lock, and refuses incompatible ones itself (two index builds, two base updates,
        two deletes of one fragment): such a refusal is a moved branch too.
        """
        if lock.refused or self.branch_head_version(state) > state.version:
            return LanceCasError(f"table {state.table_id}: Lance branch {state.lance_branch} moved")
        raise exc

    # --- maintenance ------------------------------------------------------------------

    def optimize(
        self,
        state: TableState,
        vectors: Mapping[str, str] | None = None,
        texts: Sequence[str] = (),
    ) -> TableState:
        """Compact small fragments and fold index deltas on the owned Lance branch at
        `state`, without changing content; build or retrain the search indexes declared
        (`vectors`: Vector property -> metric, `texts`: `@search` properties; see
        `storage.search_indexes`). CAS-checked like every write; raises `LanceCasError` if the
        branch moved. Returns `state` when there is nothing to do.
        """

        lock = self.cas_lock(state.table_id, state.lance_branch)
        ds = self._checkout(self._open_latest(state.table_id, commit_lock=lock), state)
        start = ds.version
        try:
            if len(ds.get_fragments()) > 1:
                inherited = _inherited_indexes(ds)
                if inherited:
                    # Lance (14) compaction remaps an index segment that lives in another
                    # Lance branch's tree (inherited at a fork) into this branch's tree
                    # but keeps the segment's old base: every indexed read of the result
                    # then fails ("Not found: .../_indices/..."). Rebuild such indexes
                    # on this branch first, so compaction remaps only our own segments.
                    lock.expected = ds.version + 1
                    ds.optimize.optimize_indices(index_names=inherited, retrain=True)
                lock.expected = ds.version + 1
                ds.optimize.compact_files(target_rows_per_fragment=MAX_ROWS_PER_FILE)
                # Even so (pylance 14), compacting a fork whose inherited indexes were
                # just rebuilt can remap their segments into this branch's tree under
                # the parent's base again (the merge oracle found it: optimize a
                # branch, fork it, optimize the fork, then read it by key). Build such
                # scalar indexes afresh on this branch, which leaves no foreign base.
                for name, column, kind in _foreign_scalar_indexes(ds):
                    lock.expected = ds.version + 1
                    ds.create_scalar_index(column, kind, name=name, replace=True)

            def before_commit() -> None:
                lock.expected = ds.version + 1

            compacted = ds.version != start
            built = search_indexes.maintain(ds, vectors or {}, texts, before_commit, state.table_id)
            # An index built just now covers every row: folding it would rewrite it.
            stale = [i.name for i in ds.describe_indices() if i.name not in built]
            if stale and (compacted or unindexed_fragments(ds, stale)):
                search_indexes.count_fold(ds, state.table_id, stale)
                lock.expected = ds.version + 1
                ds.optimize.optimize_indices(index_names=stale)
        except OSError as exc:
            raise self.cas_failure(state, lock, exc) from exc
        if ds.version == start:
            return state
        return TableState(state.table_id, state.lance_branch, ds.version, state.owner)

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
        lock = self.cas_lock(state.table_id, state.lance_branch)
        ds = self._checkout(self._open_latest(state.table_id, commit_lock=lock), state)
        try:
            if delete_all:
                lock.expected = ds.version + 1
                ds.delete("true")
            elif delete_ids:
                for chunk in _chunks(delete_ids, 4096):
                    ds = _delete_keys(ds, chunk, lock)
            if ds.version != state.version:
                faults.hit("table.after_delete")
            if append is not None and append.num_rows:
                lock.expected = ds.version + 1
                ds.insert(self._reported(append), max_rows_per_file=MAX_ROWS_PER_FILE)
                faults.hit("table.after_append")
                large = self.index_large_appends and append.num_rows >= INDEX_APPEND_THRESHOLD
                keyed = btree_indexes(ds)
                if keyed and (large or unindexed_fragments(ds, keyed) >= INDEX_REFRESH_FRAGMENTS):
                    lock.expected = ds.version + 1
                    refresh_indexes(ds, keyed, state.table_id)
        except OSError as exc:
            raise self.cas_failure(state, lock, exc) from exc
        return TableState(
            table_id=state.table_id,
            lance_branch=state.lance_branch,
            version=ds.version,
            owner=state.owner,
        )

    def replace_column(
        self,
        state: TableState,
        field: pa.Field,
        ids: pa.Array,
        values: pa.Array,
        reindex: bool,
    ) -> TableState:
        """Set `field` to `values` for the rows `ids` on the owned Lance branch at
        `state`, writing only that column (`storage.columns`); `reindex`: rebuild its
        scalar index. CAS-checked like `apply` (raises `LanceCasError` if it moved)."""
        lock = self.cas_lock(state.table_id, state.lance_branch)
        ds = self._checkout(self._open_latest(state.table_id, commit_lock=lock), state)
        try:
            ds = replace_column(ds, lock, field, ids, values)
            if reindex:
                lock.expected = ds.version + 1
                ds.create_scalar_index(field.name, "BTREE", replace=True)
        except OSError as exc:
            raise self.cas_failure(state, lock, exc) from exc
        return TableState(state.table_id, state.lance_branch, ds.version, state.owner)

    def _reported(self, table: pa.Table) -> pa.Table | pa.RecordBatchReader:
        """`table`, or a reader of it that calls `on_rows_written` as Lance takes rows."""
        report = self.on_rows_written
        if report is None:
            return table

        def batches() -> Iterator[pa.RecordBatch]:
            for batch in table.to_batches(max_chunksize=REPORT_BATCH_ROWS):
                yield batch
                report(batch.num_rows)  # Lance asked for the next batch: this one is in

        return pa.RecordBatchReader.from_batches(table.schema, batches())


def _delete_keys(ds: lance.LanceDataset, keys: list[str], lock: _CasLock) -> lance.LanceDataset:
    """Delete the rows whose `id` is in `keys` as one CAS-checked Lance commit.

    Few keys in few fragments: delete within those fragments only (the same predicate,
    the same `Delete` operation `LanceDataset.delete` commits). Otherwise, or when the
    index finds nothing, `LanceDataset.delete` itself.
    """
    predicate = f"id IN ({_sql_list(keys)})"
    fragments: list[int] = []
    if len(keys) <= TARGETED_DELETE_KEYS:
        hits = ds.to_table(columns=["id"], filter=predicate, with_row_address=True)
        fragments = sorted({addr >> 32 for addr in hits.column("_rowaddr").to_pylist()})
    lock.expected = ds.version + 1
    if not fragments or len(fragments) > TARGETED_DELETE_FRAGMENTS:
        ds.delete(predicate)
        return ds
    updated, removed = [], []
    for fragment_id in fragments:
        fragment = ds.get_fragment(fragment_id)
        if fragment is None:  # cannot happen at a pinned version; be safe
            ds.delete(predicate)
            return ds
        new = fragment.delete(predicate)
        if new is None:
            removed.append(fragment_id)
        else:
            updated.append(new)
    return lance.LanceDataset.commit(
        ds,
        lance.LanceOperation.Delete(updated, removed, predicate),
        read_version=ds.version,
        commit_lock=lock,
    )


def refresh_indexes(ds: lance.LanceDataset, names: list[str], label: str) -> None:
    """Index the fragments indexes `names` do not cover yet, as new delta segments."""
    search_indexes.count_fold(ds, label, names)
    ds.optimize.optimize_indices(num_indices_to_merge=0, index_names=names)


def btree_indexes(ds: lance.LanceDataset) -> list[str]:
    """The BTREE (key and `@index`) indexes: the only ones a write or merge refreshes.
    Search indexes (ANN, full-text) are built and folded by `optimize` alone."""
    return [index.name for index in ds.describe_indices() if "BTree" in index.type_url]


def unindexed_fragments(ds: lance.LanceDataset, names: list[str] | None = None) -> int:
    """Fragments of `ds` that some index (of `names`, default all) does not cover (0
    without indexes).

    Manifest metadata only: no index file is read.
    """
    fragments = ds.fragment_ids()
    most = 0
    for index in ds.describe_indices():
        if names is not None and index.name not in names:
            continue
        covered = fragments.copy()
        for segment in index.segments:
            covered = covered - segment.fragment_ids
        most = max(most, len(covered))
    return most


def _inherited_indexes(ds: lance.LanceDataset) -> list[str]:
    """Indexes of `ds` with a segment stored under another base (a parent Lance branch's
    or the root's tree, inherited at a fork) rather than this branch's own tree."""
    return [
        index.name
        for index in ds.describe_indices()
        if any(getattr(seg, "base_id", None) is not None for seg in index.segments)
    ]


# describe_indices()'s index_type -> create_scalar_index's index_type (pylance 14)
ScalarKind = Literal["BTREE", "BITMAP", "INVERTED"]
_SCALAR_KINDS: dict[str, ScalarKind] = {
    "BTree": "BTREE",
    "Bitmap": "BITMAP",
    "Inverted": "INVERTED",
}


def _foreign_scalar_indexes(ds: lance.LanceDataset) -> list[tuple[str, str, ScalarKind]]:
    """(name, column, kind) of the scalar indexes of `ds` with a segment under another
    base (see `_inherited_indexes`)."""
    inherited = set(_inherited_indexes(ds))
    return [
        (index.name, index.field_names[0], _SCALAR_KINDS[index.index_type])
        for index in ds.describe_indices()
        if index.name in inherited
        and index.index_type in _SCALAR_KINDS
        and len(index.field_names) == 1
    ]


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def sql_literal(value: str) -> str:
    return string_literal(str(value))


def _sql_list(values: list[str]) -> str:
    return ", ".join(sql_literal(v) for v in values)
