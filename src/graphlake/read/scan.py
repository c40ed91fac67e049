"""A streaming scan of one table at one pinned commit, held by a read lease.

`Snapshot.scan(type, columns=, where=)` resolves the type and builds a `Scan` of the
snapshot's repo, commit and type: it checks its arguments, takes a read lease on the
commit (`graphlake.catalog.leases`: `gc` keeps what the commit pins while
the lease is live) and reads exactly that commit's Lance state, whatever later writes,
merges, resets or branch deletions do. Rows arrive as Arrow record batches of at most
`batch_size` rows: memory is bounded by the batch size, not the table size.

Blob columns are read only when named in `columns`: by default a scan projects every
other column, and Lance's projection pushdown keeps the blob bytes unread. A named Blob
column is read as `blobs=` says: `"bytes"` (the scan's default) materializes the bytes
in each batch (`large_binary`); `"lazy"` reads none of them: the batch's column holds
each row's stable row id (`uint64`), and `blob_refs(batch, column)` turns it into
`graphlake.read.blobs.BlobRef` handles that read the bytes on demand, in batches
(`read_blobs`). The readers default to lazy.

The readers in `graphlake.readers` (PyTorch, Ray Data, Hugging Face, Polars) build on a
`Scan`: `fragments()` lists the pinned table's Lance fragments with their row counts
under the filter, `read_slices()` reads row ranges of fragments, and `spec()` is a small
picklable description that a worker process (a DataLoader worker, a Ray task) opens
again (`ScanSpec.open`) without a lease of its own: the process that made the scan
holds it.

A scan releases its lease on `close()` (it is a context manager), or when it is garbage
collected; a killed process's lease runs out after `lease_s`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import lance
import pyarrow as pa

from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.leases import LEASE_S, Lease, ReadLeases
from graphlake.errors import QueryError, ReaderError, UnknownPropertyError, clean_message
from graphlake.read.blobs import BlobMode, BlobRef, BlobSource, check_blob_mode
from graphlake.read.filter import compile_filter
from graphlake.repo import Repo

if TYPE_CHECKING:
    from graphlake.schema.model import EdgeType, NodeType

__all__ = ["DEFAULT_BATCH_SIZE", "Scan", "ScanSpec", "Slice"]

DEFAULT_BATCH_SIZE = 1024


@dataclass(frozen=True)
class Slice:
    """Rows `offset .. offset + count` (counted under the scan's filter) of a fragment."""

    fragment: int
    offset: int
    count: int


@dataclass(frozen=True)
class ScanSpec:
    """What a worker process needs to read a scan's pinned table again (picklable)."""

    uri: str
    storage_options: dict[str, str] | None
    table: str
    state: TableState
    columns: tuple[str, ...]
    filter: str | None
    batch_size: int
    lazy_blobs: tuple[str, ...] = ()  # Blob columns read as row ids (blobs="lazy")

    def open(self) -> lance.LanceDataset:

        return Repo(self.uri, self.storage_options).tables.open(self.state)

    def read_slices(
        self, slices: Sequence[Slice], ds: lance.LanceDataset | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The rows of `slices`, in order, as batches of at most `batch_size` rows."""
        ds = ds if ds is not None else self.open()
        fragments = {f.fragment_id: f for f in ds.get_fragments()}
        for s in slices:
            if s.count <= 0:
                continue
            scanner = ds.scanner(
                columns=self.projection(),
                filter=self.filter,
                fragments=[fragments[s.fragment]],
                offset=s.offset,
                limit=s.count,
                batch_size=self.batch_size,
            )
            yield from self.batches(scanner, self.filter)

    def projection(self) -> list[str]:
        """What Lance reads: the columns, lazy Blob columns replaced by one `_rowid`."""
        if not self.lazy_blobs:
            return list(self.columns)
        return [c for c in self.columns if c not in self.lazy_blobs] + ["_rowid"]

    def schema(self, full: pa.Schema) -> pa.Schema:
        """The batches' schema given the table's (lazy Blob columns: uint64 row ids)."""
        return pa.schema(
            [_lazy_field(c) if c in self.lazy_blobs else full.field(c) for c in self.columns]
        )

    def batches(self, scanner: Any, where: str | None) -> Iterator[pa.RecordBatch]:
        try:
            for batch in scanner.to_batches():
                if batch.num_rows:
                    yield self._shape(batch)
        except (OSError, ValueError, pa.ArrowInvalid) as exc:
            raise QueryError(
                f"{self.table}: cannot scan with filter {where!r}: {clean_message(exc)}"
            ) from None

    def _shape(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if not self.lazy_blobs:
            return batch
        lazy = set(self.lazy_blobs)
        arrays = [batch.column("_rowid" if c in lazy else c) for c in self.columns]
        fields = [_lazy_field(c) if c in lazy else batch.schema.field(c) for c in self.columns]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))

    def blob_source(self, column: str) -> BlobSource:
        """The pinned Blob column `column` (what its handles share)."""
        options = (
            None if self.storage_options is None else tuple(sorted(self.storage_options.items()))
        )
        return BlobSource(self.uri, options, self.table, self.state, column)

    def blob_refs(self, batch: pa.RecordBatch | pa.Table, column: str) -> list[BlobRef]:
        """One handle per row of a lazy Blob column of `batch`."""
        if column not in self.lazy_blobs:
            raise ReaderError(f"{self.table}.{column} is not a lazily read Blob column here")
        source = self.blob_source(column)
        return [BlobRef(source, r) for r in batch.column(column).to_pylist()]


def _lazy_field(name: str) -> pa.Field:
    """A lazy Blob column in a batch: the rows' stable row ids."""
    return pa.field(name, pa.uint64(), metadata={b"graphlake.blob": b"lazy"})


class Scan:
    """One table of a pinned commit, streamed as Arrow batches under a read lease.

    Built by `Snapshot.scan`, which resolves `table` (a node or edge type of the commit's
    schema): a scan needs the repo, the commit and the type, not the snapshot."""

    def __init__(
        self,
        repo: Repo,
        commit: Commit,
        table: NodeType | EdgeType,
        *,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        lease_s: float = LEASE_S,
        blobs: str = "bytes",
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ReaderError(f"batch_size is a whole number of at least 1, not {batch_size!r}")
        if not isinstance(lease_s, int | float) or not lease_s > 0:
            raise ReaderError(f"lease_s is a number of seconds above 0, not {lease_s!r}")
        self.repo = repo
        self.commit = commit
        self.type = table
        self.name = table.name
        self.batch_size = batch_size
        self.state = commit.tables[self.name]
        # The lease comes before the first table access: from here on gc keeps the state.
        self.lease: Lease = ReadLeases(repo.store).take(commit.id, lease_s)
        self._finalizer = weakref.finalize(self, self.lease.release)
        try:
            self.dataset = repo.tables.open(self.state)
            names = self.dataset.schema.names
            if columns is None:
                columns = [c for c in names if c not in self.blob_columns]
            elif isinstance(columns, str):
                raise ReaderError(f"columns is a list of column names, not the string {columns!r}")
            columns = list(dict.fromkeys(columns))
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise UnknownPropertyError(
                    f"{self.name} has no column {', '.join(map(repr, unknown))} "
                    f"(columns: {', '.join(names)})"
                )
            self.columns: tuple[str, ...] = tuple(columns)
            named_blobs = [c for c in self.columns if c in self.blob_columns]
            self.blobs: BlobMode = check_blob_mode(blobs, named_blobs)
            self.lazy_blobs: tuple[str, ...] = tuple(named_blobs) if blobs == "lazy" else ()
            # Only the safe filter grammar reaches Lance (no functions: bounded cost).
            self.filter = None if where is None else compile_filter(where, self.name, names)
            self.where = where
        except BaseException:
            self.close()
            raise

    # --- what is read ----------------------------------------------------------------

    @property
    def commit_id(self) -> str:
        return self.commit.id

    @cached_property
    def blob_columns(self) -> frozenset[str]:
        return frozenset(p.name for p in self.type.properties if p.type.kind == "Blob")

    @cached_property
    def schema(self) -> pa.Schema:
        """The Arrow schema of the batches (the projected columns, in order; a lazy Blob
        column is `uint64`, the rows' stable row ids)."""
        return self.spec().schema(self.dataset.schema)

    def fragments(self) -> list[tuple[int, int]]:
        """(fragment id, rows under the filter) of every fragment, in fragment order."""
        return [
            (f.fragment_id, f.count_rows(self.filter) if self.filter else f.count_rows())
            for f in self.dataset.get_fragments()
        ]

    def count_rows(self) -> int:
        return sum(n for _, n in self.fragments())

    def spec(self, batch_size: int | None = None) -> ScanSpec:
        return ScanSpec(
            self.repo.uri,
            self.repo.storage_options,
            self.name,
            self.state,
            self.columns,
            self.filter,
            batch_size or self.batch_size,
            self.lazy_blobs,
        )

    # --- reading ---------------------------------------------------------------------

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self.to_batches()

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """Every row, in fragment order, as batches of at most `batch_size` rows."""
        spec = self.spec()
        scanner = self.dataset.scanner(
            columns=spec.projection(), filter=self.filter, batch_size=self.batch_size
        )
        return spec.batches(scanner, self.where)

    def blob_refs(self, batch: pa.RecordBatch | pa.Table, column: str) -> list[BlobRef]:
        """One `BlobRef` per row of lazy Blob column `column` of one of this scan's batches."""
        return self.spec().blob_refs(batch, column)

    def read_slices(self, slices: Sequence[Slice]) -> Iterator[pa.RecordBatch]:
        return self.spec().read_slices(slices, self.dataset)

    def to_reader(self) -> pa.RecordBatchReader:
        """A `RecordBatchReader` over `to_batches()` (DuckDB, Polars and pyarrow take it)."""
        return pa.RecordBatchReader.from_batches(self.schema, self.to_batches())

    def to_table(self) -> pa.Table:
        """Everything at once (memory: the whole projected table)."""
        return pa.Table.from_batches(list(self.to_batches()), schema=self.schema)

    # --- the lease -------------------------------------------------------------------

    def close(self) -> None:
        """Release the read lease (idempotent); the scan must not be read afterwards."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self) -> Scan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Scan({self.name!r} at {self.commit_id[:12]}, columns={list(self.columns)}, "
            f"where={self.where!r}, blobs={self.blobs!r})"
        )
