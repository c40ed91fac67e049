"""A pinned, read-only view of one graph commit: every table at its exact Lance state.

`read` returns a whole table at once; `scan` streams one (Arrow batches, bounded memory)
under a read lease that `gc` honours (see `graphlake.read.scan`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.catalog.leases import LEASE_S, ReadLeases
from graphlake.catalog.names import validate_branch_name
from graphlake.catalog.revisions import parse_revision
from graphlake.errors import (
    CommitNotFoundError,
    InvalidNameError,
    QueryError,
    TypeMismatchError,
    UnknownPropertyError,
    UnknownTableError,
    clean_message,
)
from graphlake.read.filter import compile_filter
from graphlake.read.floats import shortest_floats
from graphlake.read.order import KEY_ORDER, OrderBy, lance_ordering, order_names, sort_columns
from graphlake.read.scan import DEFAULT_BATCH_SIZE, Scan
from graphlake.schema.keys import key_string
from graphlake.schema.model import EdgeType, NodeType, Schema, TableKind

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo

T = TypeVar("T")


class Snapshot:
    """`commit` of `repo`; `revision` is what it was resolved from (`Graph.snapshot`), if
    anything: a scan refused because gc is removing the commit resolves it once more."""

    def __init__(self, repo: Repo, commit: Commit, revision: str | None = None):
        self.repo = repo
        self.commit = commit
        self.revision = revision

    @property
    def schema(self) -> Schema:
        """The schema in force at this commit (not the branch's current one)."""
        return self.repo.schemas.of(self.commit)

    def type(self, name: str, kind: TableKind | None = None) -> NodeType | EdgeType:
        schema = self.schema
        t = schema.table(name)
        if t is None or (kind == "node" and t.is_edge) or (kind == "edge" and not t.is_edge):
            pool = (
                schema.nodes
                if kind == "node"
                else schema.edges
                if kind == "edge"
                else schema.table_names
            )
            what = {"node": "node type", "edge": "edge type"}.get(kind or "", "node or edge type")
            raise UnknownTableError(f"unknown {what} {name!r} (known: {', '.join(pool)})")
        return t

    def dataset(self, name: str) -> lance.LanceDataset:
        return self.repo.tables.open(self.commit.tables[name])

    def datasets(self) -> dict[str, lance.LanceDataset]:
        return {name: self.dataset(name) for name in self.schema.table_names}

    def read(
        self,
        name: str,
        kind: TableKind | None = None,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        order_by: OrderBy = KEY_ORDER,
    ) -> pa.Table:
        """Rows of `name` matching `where`, ordered by `order_by` (default: by `id`;
        None: storage order, see `read.order`), at most `limit`."""
        t = self.type(name, kind)
        ds = self.dataset(t.name)
        if columns is not None:
            columns = list(columns)
            unknown = [c for c in columns if c not in ds.schema.names]
            if unknown:
                raise UnknownPropertyError(
                    f"{t.name} has no column {', '.join(map(repr, unknown))} "
                    f"(columns: {', '.join(ds.schema.names)})"
                )
        ordering = lance_ordering(order_by, t.name, ds.schema.names)
        # Lance sorts only by projected columns: read them too, then drop them.
        extra = [c for c in sort_columns(ordering) if columns is not None and c not in columns]
        # Only the safe filter grammar reaches Lance (no functions: bounded cost).
        lance_filter = None if where is None else compile_filter(where, t.name, ds.schema.names)
        try:
            rows = ds.to_table(
                columns=None if columns is None else [*columns, *extra],
                filter=lance_filter,
                limit=limit,
                order_by=ordering,
            )
        except (OSError, ValueError, pa.ArrowInvalid) as exc:
            what = f"filter {where!r}" if where is not None else "the read"
            if ordering:
                what += f" ordered by {', '.join(order_names(order_by))}"
            raise QueryError(f"{t.name}: cannot apply {what}: {clean_message(exc)}") from None
        return rows.select(columns) if extra else rows

    def scan(
        self,
        name: str,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        *,
        kind: TableKind | None = None,
        batch_size: int | None = None,
        lease_s: float | None = None,
        blobs: str = "bytes",
    ) -> Scan:
        """Stream table `name` of this commit as Arrow batches, under a read lease
        (`graphlake.read.scan.Scan`; Blob columns only when named in `columns`, as bytes
        or, `blobs="lazy"`, as row ids that `scan.blob_refs` turns into handles).

        Every reader (`to_torch`, `to_ray`, `to_hf`, `to_polars`, export) takes its lease
        here. If a running gc is removing the commit (or removed it: the lease is refused,
        see `graphlake.catalog.leases`), a snapshot of a revision that follows a branch
        (`main`, `main~2`) resolves it once more and scans that commit (`scan.commit_id`
        says which: the branch moved on); any other raises `CommitNotFoundError`."""
        options: dict[str, Any] = {
            "columns": columns,
            "where": where,
            "batch_size": DEFAULT_BATCH_SIZE if batch_size is None else batch_size,
            "lease_s": LEASE_S if lease_s is None else lease_s,
            "blobs": blobs,
        }
        return self._claimed(lambda s: Scan(s.repo, s.commit, s.type(name, kind), **options))

    @contextmanager
    def leased(self, lease_s: float = LEASE_S) -> Iterator[Snapshot]:
        """This snapshot under a read lease for the block, for a reader that reads the
        tables itself (`graphlake export`). Refused as `scan` is; a branch revision is
        then resolved once more and the block gets a snapshot of that commit."""
        snap, lease = self._claimed(
            lambda s: (s, ReadLeases(s.repo.store).take(s.commit.id, lease_s))
        )
        try:
            yield snap
        finally:
            lease.release()

    def _claimed(self, claim: Callable[[Snapshot], T]) -> T:
        """`claim(self)`; if a running gc is removing the commit (CommitNotFoundError),
        `claim` of the commit the revision names now, once (see `scan`)."""
        try:
            return claim(self)
        except CommitNotFoundError as refused:
            again = Snapshot(self.repo, self._again(refused), self.revision)
        try:
            return claim(again)
        except CommitNotFoundError as refused:  # once only: a branch head is never condemned
            raise self._refusal(refused) from None

    def _again(self, refused: CommitNotFoundError) -> Commit:
        """The commit the snapshot's revision names now, if it follows a branch."""
        if self.revision is not None and self._follows_branch(self.revision):
            again = self.repo.resolve(self.revision)
            if again.id != self.commit.id:
                return again
        raise self._refusal(refused) from None

    def _follows_branch(self, revision: str) -> bool:
        """Whether `revision` starts at a branch (a branch, or one with `~N`/`^N` steps)."""
        for name in (revision, parse_revision(revision).base):
            try:
                ref = self.repo.refs.head(validate_branch_name(name))
            except InvalidNameError:
                continue
            if ref is not None and ref.commit is not None:
                return True
        return False

    def _refusal(self, refused: CommitNotFoundError) -> CommitNotFoundError:
        if self.revision is None:
            return refused
        return CommitNotFoundError(f"cannot read revision {self.revision!r}: {refused}")

    def get(self, name: str, key: Any) -> dict[str, Any] | None:
        """The row with key `key` as Python values (float32 as its shortest decimal, see
        `read.floats`), or None."""
        self.type(name)
        try:
            key_text = key_string(key)
        except TypeError as exc:
            raise TypeMismatchError(f"{name}: a key is a string or an integer: {exc}") from None
        table = self.dataset(name).to_table(filter=pc.field("id") == key_text)
        rows = shortest_floats(table).to_pylist()
        return rows[0] if rows else None
