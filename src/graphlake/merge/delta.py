"""What one side changed in one table since the merge base, as keys and row images.

Discovery finds candidate keys; the rows of those keys are then read by key (BTREE
index) at both states and compared, so a key whose changes net to zero is no change.

Two discovery paths:
- lineage (`storage.lineage`): Lance's version deltas along the branch tree, O(changed rows);
- walk: every row of both states as a narrow (id, row hash) pair, joined in DuckDB under
  a memory limit (spilling to disk); payload columns are hashed while streaming, never
  held. Exceeding the budget raises `MergeMemoryError`; it never returns a partial result.
`lineage="on"` tries lineage and falls back to the walk with a recorded reason; "off"
walks; "verify" runs both and raises `LineageMismatchError` on any difference.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

import duckdb
import lance
import pyarrow as pa

from graphlake import probes
from graphlake.catalog.commits import TableState
from graphlake.errors import LineageMismatchError, MergeError, MergeMemoryError
from graphlake.sqltext import ident
from graphlake.storage import lineage as lin
from graphlake.storage.fragments import Rows
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.tables import TableStore

Row = dict[str, Any]
LINEAGE_MODES = ("on", "off", "verify")
DEFAULT_MEMORY_BUDGET = 256 * 1024 * 1024


class TableDelta:
    """Changes of one side against the base: `base[k]` / `side[k]` are the row images
    (absent when the key did not exist there) for every changed key `k`.

    When every change is an insert found by lineage, the side's rows stay columnar
    (`inserts`, read a column at a time) and the `side` dict is only built if something
    asks for it: an insert-only merge of a million rows never turns them into Python
    objects, and reads only the columns its checks need.
    """

    def __init__(
        self,
        keys: set[str] | None = None,
        base: dict[str, Row] | None = None,
        side: dict[str, Row] | None = None,
        *,
        inserts: Rows | None = None,
        path: str = "none",
    ) -> None:
        # With `inserts` and no `keys`, the keys stay in its `id` column until asked for.
        self._keys: set[str] | None = (
            None if keys is None and inserts is not None else set(keys or ())
        )
        self.base: dict[str, Row] = dict(base or {})
        self._side = side
        self.inserts = inserts  # the side's rows of all `keys`, when all are inserts
        self.path = path  # "same-state" | "lineage" | "walk" | "verified" (both agreed)
        self.fallback: str | None = None  # why lineage was not used, when it was tried
        self.candidates = 0
        self.rows_scanned = 0  # rows the discovery itself read (deltas or walk)
        self.label = ""  # the branch whose changes these are, for conflict reports

    @property
    def keys(self) -> set[str]:
        if self._keys is None:
            self._keys = set(self.key_column().to_pylist())
        return self._keys

    @property
    def size(self) -> int:
        """How many keys changed, without building `keys`."""
        if self._keys is None and self.inserts is not None:
            return self.inserts.num_rows
        return len(self.keys)

    def key_column(self) -> pa.ChunkedArray:
        """The changed keys as Arrow strings (columnar when the rows are)."""
        if self._keys is None and self.inserts is not None:
            return self.inserts.read(["id"])["id"]
        return pa.chunked_array([pa.array(sorted(self.keys), pa.string())])

    @property
    def side(self) -> dict[str, Row]:
        if self._side is None:
            self._side = _by_id(self.inserts.read()) if self.inserts is not None else {}
        return self._side

    def side_table(self, schema: pa.Schema) -> pa.Table:
        """The side's rows of every changed key that exists there, as Arrow; only the
        columns of `schema` (a projection of the table's) are read from `inserts`."""
        if self.inserts is not None:
            return self.inserts.read(schema.names).cast(schema)
        return pa.Table.from_pylist([self.side[k] for k in sorted(self.side)], schema=schema)

    def inserted(self) -> list[str]:
        return sorted(k for k in self.keys if k not in self.base)

    def deleted(self) -> list[str]:
        if self.inserts is not None:
            return []
        return sorted(k for k in self.keys if k not in self.side)

    def updated(self) -> list[str]:
        return sorted(k for k in self.keys if k in self.base and k in self.side)

    def counts(self) -> dict[str, int]:
        """How many keys were inserted, updated and deleted (as a diff counts them)."""
        if self.inserts is not None:  # insert-only via lineage: no key set is built
            return {"inserted": self.size, "updated": 0, "deleted": 0}
        inserted = sum(1 for k in self.keys if k not in self.base)
        deleted = sum(1 for k in self.keys if k not in self.side)
        return {"inserted": inserted, "updated": self.size - inserted - deleted, "deleted": deleted}

    @property
    def only_inserts(self) -> bool:
        return self.inserts is not None or all(k not in self.base for k in self.keys)

    def __bool__(self) -> bool:
        return self.size > 0


@dataclass(frozen=True)
class DiscoverySettings:
    lineage: str = "on"
    memory_budget: int = DEFAULT_MEMORY_BUDGET
    candidate_budget: int = lin.DEFAULT_CANDIDATE_BUDGET

    @classmethod
    def resolve(cls, lineage: str | None, memory_budget: int | None) -> DiscoverySettings:
        mode = lineage or os.environ.get("GRAPHLAKE_MERGE_LINEAGE", "on")
        if mode not in LINEAGE_MODES:
            raise MergeError(f"lineage must be one of {', '.join(LINEAGE_MODES)}, not {mode!r}")
        budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else memory_budget
        if budget < 16 * 1024 * 1024:
            raise MergeError("memory_budget must be at least 16 MiB")
        return cls(mode, budget)


def discover(
    tables: TableStore,
    base: TableState,
    side: TableState,
    settings: DiscoverySettings = DiscoverySettings(),
    role: str = "source",
) -> TableDelta:
    """The changes from `base` to `side` (two states of one table)."""
    if _same(base, side):
        return TableDelta(path="same-state")
    lineage_delta: TableDelta | None = None
    fallback: str | None = None
    if settings.lineage in ("on", "verify"):
        try:
            found = lin.candidates(tables, base, side, settings.candidate_budget)
        except lin.LineageUnavailable as exc:
            fallback = exc.reason.value
        else:
            if found.inserted is not None:  # only new rows: lineage already holds them
                lineage_delta = TableDelta(inserts=found.inserted)
            else:
                lineage_delta = rows_for(tables.open(base), tables.open(side), found.keys)
            lineage_delta.path = "lineage"
            lineage_delta.candidates = found.count
            lineage_delta.rows_scanned = found.rows_read
            probes.add("discovery_rows", found.rows_read)
            if settings.lineage == "on":
                return lineage_delta
    walk_delta = _walk(tables, base, side, settings.memory_budget, role)
    walk_delta.fallback = fallback
    if settings.lineage == "verify" and lineage_delta is not None:
        _verify(base.table_id, role, lineage_delta, walk_delta)
        walk_delta.path = "verified"  # both paths ran and agree
    return walk_delta


def _verify(table_id: str, role: str, a: TableDelta, b: TableDelta) -> None:
    if a.keys != b.keys or a.base != b.base or a.side != b.side:
        only_a = sorted(a.keys - b.keys)[:5]
        only_b = sorted(b.keys - a.keys)[:5]
        raise LineageMismatchError(
            f"table {table_id} ({role}): lineage and walk disagree "
            f"(lineage only: {only_a}, walk only: {only_b})"
        )


def rows_for(
    base_ds: lance.LanceDataset, side_ds: lance.LanceDataset, candidates: set[str]
) -> TableDelta:
    """Read the candidates' rows at both states and keep the keys that really differ."""
    keys = sorted(candidates)
    base_rows = _by_id(rows_where_in(base_ds, "id", keys))
    side_rows = _by_id(rows_where_in(side_ds, "id", keys))
    changed = {k for k in keys if base_rows.get(k) != side_rows.get(k)}
    return TableDelta(
        keys=changed,
        base={k: r for k, r in base_rows.items() if k in changed},
        side={k: r for k, r in side_rows.items() if k in changed},
    )


def _same(a: TableState, b: TableState) -> bool:
    return (a.table_id, a.lance_branch, a.version) == (b.table_id, b.lance_branch, b.version)


def _by_id(table: Any) -> dict[str, Row]:
    return {r["id"]: r for r in table.to_pylist()}


def _walk(
    tables: TableStore, base: TableState, side: TableState, budget: int, role: str
) -> TableDelta:
    base_ds, side_ds = tables.open(base), tables.open(side)
    keys, scanned = walk_candidates(base_ds, side_ds, budget, f"{base.table_id} ({role})")
    probes.add("discovery_rows", scanned)
    delta = rows_for(base_ds, side_ds, keys)
    delta.path = "walk"
    delta.candidates = len(keys)
    delta.rows_scanned = scanned
    return delta


def walk_candidates(
    base_ds: lance.LanceDataset, side_ds: lance.LanceDataset, budget: int, what: str
) -> tuple[set[str], int]:
    """Keys whose rows differ, from a full outer join of narrow (id, row hash) pairs.

    Each state streams into DuckDB as pages of rows sized to the budget (`_Pages`);
    DuckDB hashes every page down to (id, h1, h2) as it arrives and only those narrow
    rows reach the join, which runs under `memory_limit` and spills to disk. DuckDB does
    not scan the datasets itself: that scan's read buffers and payload columns sit
    outside `memory_limit` (a 1M-row Vector(128) table peaked at ~1 GB whatever the
    budget).
    """
    b_schema, s_schema = base_ds.schema, side_ds.schema
    columns = [n for n in s_schema.names if n != "id"]
    columns += [n for n in b_schema.names if n != "id" and n not in columns]
    # The two states may have different layouts (a diff across a schema change): a
    # column one side lacks hashes as NULL there, a column whose type differs hashes
    # per side. Candidates are then a superset of the changes in either layout (a row
    # with a value in such a column is one); `rows_for` and the caller's projection
    # keep the real ones.
    terms = {
        label: _layout_terms(schema, columns, b_schema, s_schema)
        for label, schema in (("b", b_schema), ("s", s_schema))
    }
    width = max(1, len(terms["b"]), len(terms["s"]))
    names = [f"t{i}" for i in range(width)]
    fwd, rev = ", ".join(names), ", ".join(reversed(names))

    def narrow(label: str, source: str) -> str:
        own = terms[label] + ["NULL"] * (width - len(terms[label]))
        inner = (
            ", ".join(f"hash({t}) AS t{i}" for i, t in enumerate(own))
            if terms["b"] or terms["s"]
            else "hash(id) AS t0"
        )
        return (
            f"SELECT id, hash({fwd}) AS h1, hash({rev}) AS h2 "
            f"FROM (SELECT id, {inner} FROM {source})"
        )

    scan_bytes = budget // _WALK_SCAN_SHARE
    duck_bytes = budget - scan_bytes
    threads = max(1, min(os.cpu_count() or 1, _WALK_MAX_THREADS, duck_bytes // _WALK_THREAD_BYTES))
    in_flight = (threads + 1) * _WALK_PAGE_COPIES  # a page per DuckDB thread, one being read
    room = max(1, scan_bytes // in_flight)  # what one page may take at most
    page_bytes = min(_WALK_MAX_PAGE_BYTES, room)
    sources = {
        "b_src": _Pages(
            base_ds, ["id", *(c for c in columns if c in b_schema.names)], page_bytes, room, what
        ),
        "s_src": _Pages(
            side_ds, ["id", *(c for c in columns if c in s_schema.names)], page_bytes, room, what
        ),
    }
    with tempfile.TemporaryDirectory(prefix="graphlake-walk-") as spill:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET memory_limit = '{max(1, _mib(duck_bytes))}MB'")
            con.execute(f"SET temp_directory = '{spill}'")
            con.execute(f"SET threads = {threads}")  # each scanning thread holds a page
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            for name, source in sources.items():
                con.register(name, source.reader())
            rows = con.execute(
                f"WITH b AS ({narrow('b', 'b_src')}), s AS ({narrow('s', 's_src')}) "
                "SELECT coalesce(b.id, s.id) FROM b FULL OUTER JOIN s ON b.id = s.id "
                "WHERE b.id IS NULL OR s.id IS NULL OR b.h1 <> s.h1 OR b.h2 <> s.h2"
            ).fetchall()
        except duckdb.OutOfMemoryException as exc:
            raise MergeMemoryError(
                f"{what}: the ordered walk needs more than its memory budget of "
                f"{_mib(budget)} MiB ({exc}); raise memory_budget"
            ) from None
        except duckdb.Error:
            # A page that failed (too large, or a read error) reaches DuckDB as an opaque
            # stream error: raise what the page raised.
            for source in sources.values():
                if source.error is not None:
                    raise source.error from None
            raise
        finally:
            con.close()
    for source in sources.values():
        if not source.finished:  # never a result from part of a state
            raise MergeError(f"{what}: the walk read {source.rows} of {source.total} rows")
    return {r[0] for r in rows}, sum(s.rows for s in sources.values())


# How the walk shares its budget. The pages in flight (one per DuckDB thread plus the
# one being read) get 1/_WALK_SCAN_SHARE, a page counted _WALK_PAGE_COPIES times over
# (Lance's read buffer and decoded page, DuckDB's vectors); DuckDB, which holds only the
# narrow (id, h1, h2) rows and their join, gets the rest and spills beyond it. Each
# DuckDB thread needs _WALK_THREAD_BYTES for a spilling join to go through (below that
# the join fails rather than spill), and more than a few threads gain nothing: the one
# page reader, not the hashing, bounds the speed. Pages stop at _WALK_MAX_PAGE_BYTES:
# larger ones are barely faster, and the process's peak grows faster than their size
# (a 16 MiB page of Vector(128) rows cost >200 MB of RSS, a 2 MiB one ~20 MB).
_WALK_SCAN_SHARE = 8
_WALK_PAGE_COPIES = 2
_WALK_THREAD_BYTES = 24 * 1024 * 1024
_WALK_MAX_THREADS = 4
_WALK_MAX_PAGE_BYTES = 4 * 1024 * 1024
# Pages grow by this factor from a single row while the row width is being learnt (a
# first page of thousands of rows could be huge when a column holds blobs or long
# strings), and stop at _WALK_MAX_PAGE_ROWS: bigger pages of narrow rows are no faster.
_WALK_PAGE_GROWTH = 16
_WALK_MAX_PAGE_ROWS = 65_536


def _layout_terms(
    schema: pa.Schema, columns: list[str], b_schema: pa.Schema, s_schema: pa.Schema
) -> list[str]:
    """One side's hash terms for `columns`, aligned term by term with the other side's
    wherever both sides hold a column of the same type."""
    out: list[str] = []
    for c in columns:
        in_b, in_s = c in b_schema.names, c in s_schema.names
        if in_b and in_s and b_schema.field(c).type == s_schema.field(c).type:
            out += _hash_terms(ident(c), schema.field(c).type)
            continue
        # Only one side has it, or the types differ: that side's terms, NULLs on the
        # other (a column with a value there then makes the row a candidate).
        for owner, has in ((b_schema, in_b), (s_schema, in_s)):
            if not has:
                continue
            own = _hash_terms(ident(c), owner.field(c).type)
            out += own if owner is schema else ["NULL"] * len(own)
    return out


def _hash_terms(expr: str, type_: pa.DataType) -> list[str]:
    """SQL terms to hash for a value of `type_`, so that different values (NULL among
    them) hash differently but by chance.

    DuckDB's hash of the value alone is not enough for lists: NULL, [] and [NULL] hash
    alike, and so do [0, x] and [x] (hash(0) is 0, which its fold absorbs). The list's
    length (NULL for a NULL list) separates these; nested lists add their elements'.
    """
    return [expr, *_shape_terms(expr, type_, 0)]


def _shape_terms(expr: str, type_: pa.DataType, depth: int) -> list[str]:
    if pa.types.is_fixed_size_list(type_):
        own = f"({expr} IS NULL)"  # the length is fixed: only NULL or not can differ
    elif pa.types.is_list(type_) or pa.types.is_large_list(type_):
        own = f"len({expr})"
    else:
        return []
    var = f"x{depth}"  # a lambda parameter per nesting level, so inner ones do not shadow
    inner = [
        f"list_transform({expr}, lambda {var}: {term})"
        for term in _shape_terms(var, type_.value_type, depth + 1)
    ]
    return [own, *inner]


class _Pages:
    """One state's rows as a stream of pages of about `page_bytes` each (when rows are
    wider than that, one row; when one row is wider than `room`, `MergeMemoryError`).

    Pages are read by offset and limit rather than by one streaming scan, however small
    its batches: a scan reads each column page of a data file whole (64 MiB per 128k-row
    file of Vector(128), more with readahead), a limited read only the rows it returns.
    The first page is one row and pages grow from there, sized by the widest rows seen.
    """

    def __init__(
        self, ds: lance.LanceDataset, columns: list[str], page_bytes: int, room: int, what: str
    ) -> None:
        self.ds = ds
        self.columns = columns
        self.page_bytes = page_bytes
        self.room = room
        self.what = what
        self.total = ds.count_rows()
        self.rows = 0
        self.error: Exception | None = None
        self._pending: list[pa.RecordBatch] = []
        self._limit = 1  # rows of the next page
        self._width = 0.0  # bytes per row, the most seen on any page

    @property
    def finished(self) -> bool:
        return self.rows == self.total

    def reader(self) -> pa.RecordBatchReader:
        schema = pa.schema([self.ds.schema.field(c) for c in self.columns])
        return pa.RecordBatchReader.from_batches(schema, self)

    def __iter__(self) -> _Pages:
        return self

    def __next__(self) -> pa.RecordBatch:
        try:
            while not self._pending:
                if self.rows >= self.total:
                    raise StopIteration
                self._pending = self._next_page()
        except StopIteration:
            raise
        except Exception as exc:
            self.error = exc  # DuckDB only passes on its text
            raise
        return self._pending.pop(0)

    def _next_page(self) -> list[pa.RecordBatch]:
        batches = list(
            self.ds.to_batches(
                columns=self.columns,
                offset=self.rows,
                limit=self._limit,
                batch_size=self._limit,
                batch_readahead=1,
                fragment_readahead=1,
                io_buffer_size=max(self.page_bytes, 1024 * 1024),
                scan_in_order=True,
            )
        )
        got = sum(b.num_rows for b in batches)
        if got == 0:  # the state is pinned: running short is a bug, not a race
            raise MergeError(f"{self.what}: the walk found {self.rows} of {self.total} rows")
        size = sum(b.get_total_buffer_size() for b in batches)
        if got == 1 and size > self.room:
            raise MergeMemoryError(
                f"{self.what}: one row takes {size:,} bytes, more than the walk can hold "
                f"at once ({self.room:,} bytes of its memory budget); raise memory_budget"
            )
        self.rows += got
        # The widest page so far sizes the next one: the width estimate only ever grows.
        self._width = max(self._width, size / got)
        fit = int(self.page_bytes / self._width)
        self._limit = max(1, min(self._limit * _WALK_PAGE_GROWTH, fit, _WALK_MAX_PAGE_ROWS))
        return batches


def _mib(n: int) -> int:
    return n // (1024 * 1024)
