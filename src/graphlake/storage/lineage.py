"""Lineage discovery: candidate keys from Lance's version history, O(changed rows).

A table state is (Lance branch, version); Lance branches form a tree (each branch forked
from an exact version of its parent). The changes between two states X and Y are found
along the tree path between them: from their lowest common point down to each, one
`ds.delta(begin, end)` per branch segment. A key is a candidate when a segment inserted,
updated or deleted it; deleted row ids map to keys at the segment's begin version.
Candidates are a superset (e.g. a key changed and changed back): `delta.rows_for` reads
their rows at X and Y and keeps only real differences. When X is Y's ancestor and Y only
added whole fragments (an insert-only path, as an ingest shard's), Y's new rows are read
from those fragments directly, and their keys stay columnar.

Whatever this cannot prove raises `LineageUnavailable` with a typed reason; the caller
falls back to the ordered walk. A fallback is never a failure.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake import probes
from graphlake.catalog.commits import TableState
from graphlake.errors import clean_message
from graphlake.storage.fragments import FragmentRows, Rows, appended_fragments
from graphlake.storage.tables import MAIN, TableStore


class FallbackReason(enum.StrEnum):
    HISTORY_CLEANED = "history_cleaned"  # a version the path needs was cleaned up
    DELETED_ROWS_UNAVAILABLE = "deleted_rows_unavailable"  # deleted ids could not be mapped
    CROSS_LINEAGE = "cross_lineage"  # the two states share no Lance branch ancestry
    STABLE_ROW_IDS_MISSING = "stable_row_ids_missing"
    METADATA_INCONSISTENT = "metadata_inconsistent"  # branch metadata or delta refused
    CANDIDATE_BUDGET = "candidate_budget"  # more candidates than the budget allows


class LineageUnavailable(Exception):
    def __init__(self, reason: FallbackReason, detail: str):
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Segment:
    """Versions (begin, end] of one Lance branch."""

    branch: str
    begin: int
    end: int


@dataclass
class LineageCandidates:
    """Candidate keys of one path. When the path from x to y only appended new rows (x
    is y's Lance ancestor and no segment deleted or updated anything), `inserted` holds
    exactly y's rows of the candidates and the keys stay in its `id` column: a million
    inserted keys never become Python strings unless something asks for `keys`."""

    _keys: set[str] | None
    segments: list[Segment]
    rows_read: int  # rows the deltas returned (inserted + updated + deleted ids)
    inserted: Rows | None = None

    @property
    def keys(self) -> set[str]:
        if self._keys is None:
            ids = [] if self.inserted is None else self.inserted.read(["id"])["id"].chunks
            self._keys = _key_set(ids)
        return self._keys

    @property
    def count(self) -> int:
        """How many candidates, without building `keys`."""
        if self._keys is None and self.inserted is not None:
            return self.inserted.num_rows
        return len(self.keys)


@dataclass
class _SegmentChanges:
    keys: set[str]  # keys the segment updated or deleted
    inserted_ids: list[pa.Array]  # keys it inserted, left columnar
    rows_read: int
    pure_insert: bool  # nothing deleted or updated in this segment
    inserted: list[pa.RecordBatch]


# Candidates above this count make the walk the cheaper (and bounded) choice.
DEFAULT_CANDIDATE_BUDGET = 2_000_000
# Inserted rows kept from the deltas themselves (so insert-only merges need no second
# read), up to this many bytes; beyond it they are read again by key instead.
INSERTED_ROWS_BYTES = 256 * 1024 * 1024


def candidates(
    tables: TableStore,
    x: TableState,
    y: TableState,
    budget: int = DEFAULT_CANDIDATE_BUDGET,
) -> LineageCandidates:
    """Keys that may differ between states `x` and `y` of one table."""
    root = tables.open(x)
    if not _has_stable_row_ids(root):
        raise LineageUnavailable(FallbackReason.STABLE_ROW_IDS_MISSING, x.table_id)
    parents = branch_parents(tables, x.table_id, {x.lance_branch, y.lance_branch})
    x_segs, y_segs = _paths(parents, (x.lance_branch, x.version), (y.lance_branch, y.version))
    if not x_segs:  # x is y's Lance ancestor: y may be x plus new fragments
        appended = _appended_rows(tables, x, y, budget)
        if appended is not None:
            return LineageCandidates(None, y_segs, appended.num_rows, appended)
    keys: set[str] = set()  # updated or deleted keys
    inserted_ids: list[pa.Array] = []  # inserted keys, columnar until they must merge in
    rows_read = 0
    pure = not x_segs
    kept: list[pa.RecordBatch] = []
    kept_bytes = 0
    for seg in (*x_segs, *y_segs):
        found = _segment_changes(tables, x.table_id, seg, keep_inserted=pure)
        keys |= found.keys
        inserted_ids += found.inserted_ids
        rows_read += found.rows_read
        kept += found.inserted
        kept_bytes += sum(b.nbytes for b in found.inserted)
        pure = pure and found.pure_insert and kept_bytes <= INSERTED_ROWS_BYTES
        if not pure:
            kept = []
        if len(keys) + sum(len(a) for a in inserted_ids) > budget:
            # The sum counts a key inserted on two segments twice: count exactly.
            keys |= _key_set(inserted_ids)
            inserted_ids = []
            if len(keys) > budget:
                raise LineageUnavailable(
                    FallbackReason.CANDIDATE_BUDGET, f"more than {budget} candidate keys"
                )
    segments = [*x_segs, *y_segs]
    if not pure:
        return LineageCandidates(keys | _key_set(inserted_ids), segments, rows_read)
    schema = tables.open(y).schema
    inserted = pa.Table.from_batches([b.select(schema.names) for b in kept], schema=schema)
    return LineageCandidates(None, segments, rows_read, Rows(inserted))


def _appended_rows(
    tables: TableStore, x: TableState, y: TableState, budget: int
) -> FragmentRows | None:
    """y's rows beyond x, when y is x plus whole new fragments (an insert-only path such
    as an ingest shard's): the rows of those fragments, read later and only the columns
    asked for. None when that does not hold or there are more rows than the budget (the
    segment deltas then decide). This skips the per-segment delta scans, which cost most
    of an insert-only merge of many shards, and the payload columns nobody reads.
    """
    y_ds = tables.open(y)
    if x.lance_branch == y.lance_branch and not _may_only_append(y_ds, y.version - x.version):
        return None
    new = appended_fragments(tables.open(x), y_ds)
    if new is None or sum(f.metadata.physical_rows for f in new) > budget:
        return None
    return FragmentRows(y_ds, new)


# Lance operations that leave every existing fragment as it was.
_KEEPS_FRAGMENTS = frozenset({"Append", "CreateIndex"})
# Beyond this many versions, reading their transactions may cost more than comparing
# the two manifests' fragments.
_MAX_TRANSACTIONS = 64


def _may_only_append(ds: lance.LanceDataset, versions: int) -> bool:
    """False when one of the last `versions` transactions of `ds` (as checked out) may
    have changed an existing fragment (a delete, an update, a rewrite): then `ds` is
    not the earlier version plus new fragments. True when each one only appended or
    built an index, or when that is unknown: the fragment comparison decides. A few
    small reads, where comparing every fragment's metadata costs O(fragments) (a table
    written by many small commits has thousands)."""
    if not 0 < versions <= _MAX_TRANSACTIONS:
        return True
    try:
        found = ds.get_transactions(versions)
    except Exception:  # e.g. a compaction of an indexed table (TypeError): unknown
        return True
    names = [None if t is None else type(t.operation).__name__ for t in found]
    if len(names) != versions or None in names:
        return True
    return all(n in _KEEPS_FRAGMENTS for n in names)


def _key_set(arrays: list[pa.Array]) -> set[str]:
    out: set[str] = set()
    for array in arrays:
        out.update(array.to_pylist())
    return out


def _has_stable_row_ids(ds: lance.LanceDataset) -> bool:
    try:
        return bool(ds.has_stable_row_ids)
    except AttributeError:  # older surface: trust the schema we created tables with
        return True


# table uri -> {Lance branch: (parent, fork version)}. A Lance branch's parent never
# changes and graphlake never reuses a branch name, so entries stay true; the map is
# reloaded when a branch it lacks is asked for.
_PARENTS: dict[str, dict[str, tuple[str, int]]] = {}


def branch_parents(tables: TableStore, table_id: str, need: set[str]) -> dict[str, tuple[str, int]]:
    """Lance branch -> (parent branch, fork version) for one table, covering `need`."""
    uri = tables.uri(table_id)
    known = _PARENTS.get(uri)
    if known is None or any(b != MAIN and b not in known for b in need):
        root = lance.dataset(uri, storage_options=tables.storage_options)
        known = _PARENTS[uri] = _branch_parents(root)
    return known


def _branch_parents(ds: lance.LanceDataset) -> dict[str, tuple[str, int]]:
    """Lance branch -> (parent branch, fork version); Lance main has no entry."""
    try:
        listed = ds.branches.list()
    except Exception as exc:  # any refusal here only means "cannot prove"
        raise LineageUnavailable(FallbackReason.METADATA_INCONSISTENT, str(exc)) from None
    out: dict[str, tuple[str, int]] = {}
    for name, info in listed.items():
        parent = info.get("parent_branch") or MAIN
        out[name] = (parent, int(info["parent_version"]))
    return out


def _chain(parents: dict[str, tuple[str, int]], point: tuple[str, int]) -> list[tuple[str, int]]:
    """[(branch, version)] from `point` up to Lance main: where the lineage sits on each."""
    chain = [point]
    seen = {point[0]}
    branch = point[0]
    while branch != MAIN:
        if branch not in parents:
            raise LineageUnavailable(
                FallbackReason.METADATA_INCONSISTENT, f"Lance branch {branch!r} is unknown"
            )
        branch, version = parents[branch]
        if branch in seen:
            raise LineageUnavailable(FallbackReason.METADATA_INCONSISTENT, "branch cycle")
        seen.add(branch)
        chain.append((branch, version))
    return chain


def chain(tables: TableStore, state: TableState) -> dict[str, int]:
    """Lance branch -> the last version of it that is `state` or its ancestor, for every
    branch on the path from `state` up to Lance main. Version numbers run on across a
    fork (a branch forked at version 5 starts at 5), so along one chain a version number
    places a state: `X` is an ancestor of `state` exactly when `X.lance_branch` is in the
    map and `X.version <= map[X.lance_branch]`."""
    parents = branch_parents(tables, state.table_id, {state.lance_branch})
    return dict(_chain(parents, (state.lance_branch, state.version)))


@dataclass(frozen=True)
class RowStamp:
    """Where one row was last written, as Lance's row version metadata records it: the
    row of `key` at `state` was created or last updated at version `written` of the
    lineage `chain` (see `chain`) and not touched since."""

    table_id: str
    key: str
    chain: dict[str, int]
    written: int
    row: dict[str, Any] = field(compare=False, default_factory=dict)  # the row itself

    def holds(self, state: TableState) -> bool:
        """True when the row at `state` is provably this row, unchanged: `state` is an
        ancestor of the stamped state (on its chain) at or after the version that wrote
        the row. Keys are unique per state, so the key names this same row there."""
        cap = self.chain.get(state.lance_branch)
        return (
            state.table_id == self.table_id
            and cap is not None
            and self.written <= state.version <= cap
        )


_STAMP_COLUMNS = ["_row_last_updated_at_version", "_row_created_at_version"]


def row_stamp(tables: TableStore, state: TableState, key: str) -> RowStamp | None:
    """The stamp of row `key` at `state`, with the row (one keyed read, by the BTREE
    index); None when the state has no such row. `LineageUnavailable` when it cannot be
    read."""

    try:
        ds = tables.open(state)
        if not _has_stable_row_ids(ds):
            raise LineageUnavailable(FallbackReason.STABLE_ROW_IDS_MISSING, state.table_id)
        found = ds.to_table(
            columns=[*ds.schema.names, *_STAMP_COLUMNS], filter=pc.field("id").isin([key])
        )
        where = chain(tables, state)
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        raise LineageUnavailable(FallbackReason.METADATA_INCONSISTENT, clean_message(exc)) from None
    if found.num_rows == 0:
        return None
    if found.num_rows > 1:
        raise LineageUnavailable(FallbackReason.METADATA_INCONSISTENT, f"key {key!r} twice")
    probes.add("lookup_rows", 1)
    row = found.to_pylist()[0]
    written = max(row.pop(_STAMP_COLUMNS[0]) or 0, row.pop(_STAMP_COLUMNS[1]) or 0)
    if not written:
        raise LineageUnavailable(FallbackReason.METADATA_INCONSISTENT, "no row version metadata")
    return RowStamp(state.table_id, key, where, written, row)


def path_segments(
    parents: dict[str, tuple[str, int]], x: tuple[str, int], y: tuple[str, int]
) -> list[Segment]:
    """The delta segments between two points of the Lance branch tree."""
    x_segs, y_segs = _paths(parents, x, y)
    return x_segs + y_segs


def _paths(
    parents: dict[str, tuple[str, int]], x: tuple[str, int], y: tuple[str, int]
) -> tuple[list[Segment], list[Segment]]:
    """Segments from the lowest common point down to x, and down to y."""
    cx, cy = _chain(parents, x), _chain(parents, y)
    on_x = {b: v for b, v in cx}
    common = next(((b, v) for b, v in cy if b in on_x), None)
    if common is None:
        raise LineageUnavailable(FallbackReason.CROSS_LINEAGE, f"{x} and {y}")
    branch = common[0]
    low = min(on_x[branch], common[1])
    return _down(cx, branch, low), _down(cy, branch, low)


def _down(chain: list[tuple[str, int]], common: str, low: int) -> list[Segment]:
    """Segments from (common, low) down the chain to its first point."""
    idx = next(i for i, (b, _) in enumerate(chain) if b == common)
    segs: list[Segment] = []
    begin = low
    for i in range(idx, -1, -1):
        branch, end = chain[i]
        if end > begin:
            segs.append(Segment(branch, begin, end))
        elif end < begin:
            raise LineageUnavailable(
                FallbackReason.METADATA_INCONSISTENT,
                f"{branch} goes back from version {begin} to {end}",
            )
        if i > 0:
            # The next branch down was forked from this branch at chain[i-1]'s fork
            # version, which is where its own history begins.
            begin = _fork_version_of_child(chain, i - 1)
    return segs


def _fork_version_of_child(chain: list[tuple[str, int]], child_idx: int) -> int:
    # chain[child_idx + 1] is (parent, fork version) for the branch at chain[child_idx].
    return chain[child_idx + 1][1]


def _segment_changes(
    tables: TableStore, table_id: str, seg: Segment, keep_inserted: bool
) -> _SegmentChanges:
    inserted: list[pa.RecordBatch] = []
    try:
        ds = _open_at(tables, table_id, seg.branch, seg.end)
        delta = ds.delta(begin_version=seg.begin, end_version=seg.end)
        keys: set[str] = set()
        inserted_ids: list[pa.Array] = []
        n = updated = 0
        for batch in delta.get_inserted_rows():
            inserted_ids.append(batch.column("id"))
            n += batch.num_rows
            if keep_inserted:
                inserted.append(batch)
        for batch in delta.get_updated_rows():
            keys.update(batch.column("id").to_pylist())
            n += batch.num_rows
            updated += batch.num_rows
        deleted = delta.get_deleted_row_ids().read_all()
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        reason = (
            FallbackReason.HISTORY_CLEANED
            if "not found" in str(exc).lower()
            else FallbackReason.METADATA_INCONSISTENT
        )
        raise LineageUnavailable(reason, f"{seg}: {clean_message(exc)}") from None
    if deleted.num_rows:
        keys |= _deleted_keys(tables, table_id, seg, deleted.column(0))
        n += deleted.num_rows
    pure = not updated and not deleted.num_rows
    if pure and keep_inserted:
        # Guard the "only appended new rows" reading with an invariant that costs two
        # metadata reads: rows(end) = rows(begin) + inserted. A rewrite reported as
        # inserts (e.g. some maintenance operation) breaks it and takes the keyed path.
        before = _open_at(tables, table_id, seg.branch, seg.begin).count_rows()
        pure = ds.count_rows() == before + sum(b.num_rows for b in inserted)
    return _SegmentChanges(keys, inserted_ids, n, pure, inserted if pure else [])


def _deleted_keys(
    tables: TableStore, table_id: str, seg: Segment, row_ids: pa.ChunkedArray
) -> set[str]:
    try:
        before = _open_at(tables, table_id, seg.branch, seg.begin)
        taken = before._take_rows(row_ids.to_pylist(), columns=["id"])
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        raise LineageUnavailable(
            FallbackReason.DELETED_ROWS_UNAVAILABLE, f"{seg}: {clean_message(exc)}"
        ) from None
    if taken.num_rows != len(row_ids):
        raise LineageUnavailable(
            FallbackReason.DELETED_ROWS_UNAVAILABLE,
            f"{seg}: {len(row_ids)} deleted row ids, {taken.num_rows} found at the begin version",
        )
    return set(taken.column("id").to_pylist())


def _open_at(tables: TableStore, table_id: str, branch: str, version: int) -> lance.LanceDataset:
    return tables.open(TableState(table_id, branch, version, owner="lineage"))
