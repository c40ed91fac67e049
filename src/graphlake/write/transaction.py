"""`Graph.write()`: stage inserts, upserts, updates and deletes; publish one graph commit.

Calls only stage (after type-checking their rows); nothing touches storage until the
`with` block ends without an exception, when `publish.publish` resolves, validates and
commits everything at once.

Read-modify-write: read through the transaction (`w.get`), not the graph. Its reads are
pinned to the branch head at the first read, and the keys it read are checked again at
publish: if another writer changed any of them meanwhile, the transaction publishes
nothing and raises `StaleReadError` (so an increment computed from a stale read can
never overwrite a newer value). `Graph.transact` re-runs a function on fresh reads.
`expect_head=` is the blunt form: publish only if the branch head is still that commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.catalog.authors import Author, acting_as, parse_author
from graphlake.errors import DataError, GraphLakeError, UnknownTableError
from graphlake.read.snapshot import Snapshot
from graphlake.schema.keys import key_string
from graphlake.schema.model import EdgeType, NodeType, Schema
from graphlake.storage.plan import Op, OpKind, ReadSet
from graphlake.write.backfill import stage
from graphlake.write.coerce import coerce, to_arrow_input
from graphlake.write.publish import publish

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo
    from graphlake.write.backfill import ColumnWrite


class Transaction:
    """One atomic graph commit on a branch. Use as a context manager via `Graph.write`."""

    def __init__(
        self,
        repo: Repo,
        branch: str,
        message: str,
        meta: dict[str, Any] | None = None,
        expect_head: str | None = None,
        author: str | Author | None = None,
    ):
        self._repo = repo
        # Parsed now, so a malformed author fails before anything is staged.
        self.author = parse_author(author) if author is not None else None
        self.branch = branch
        self.message = message
        self.meta = dict(meta or {})
        self._ops: list[Op] = []
        self._columns: list[ColumnWrite] = []
        self._done = False
        self.commit: Commit | None = None
        self._expect_head = repo.commits.get(expect_head).id if expect_head else None
        self._reads = ReadSet(None, {})
        self._schema_id: str | None = None  # the schema rows are staged against

    # --- reading ----------------------------------------------------------------------

    def get(self, table: str, key: Any) -> dict[str, Any] | None:
        """The row of `key` as the branch showed it at this transaction's first read
        (staged changes are not applied). The key joins the read set: if another
        writer changes that row before this transaction publishes, it raises
        `StaleReadError` instead of publishing."""
        t = self._type(table)
        self._check_open()
        if self._reads.base is None:
            base = self._expect_head or self._repo.head(self.branch).id
            self._reads = ReadSet(base, {})
        assert self._reads.base is not None
        try:
            key_text = key_string(key)
        except TypeError as exc:
            raise DataError(f"{t.name}: a key is a string or an integer: {exc}") from None
        self._reads.keys.setdefault(t.name, set()).add(key_text)
        return Snapshot(self._repo, self._repo.commits.get(self._reads.base)).get(t.name, key_text)

    # --- staging ----------------------------------------------------------------------

    def insert(self, table: str, rows: Any, *, coerce: bool = False) -> None:
        """Add rows; any key that exists already (or twice here) is an error."""
        self._stage("insert", table, rows, partial=False, cast=coerce)

    def upsert(self, table: str, rows: Any, *, coerce: bool = False) -> None:
        """Insert new keys, update existing ones (only the given properties change)."""
        self._stage("upsert", table, rows, partial=True, cast=coerce)

    def update(self, table: str, rows: Any, *, coerce: bool = False) -> None:
        """Change the given properties of existing rows; an unknown key is an error."""
        self._stage("update", table, rows, partial=True, cast=coerce)

    def overwrite(self, table: str, rows: Any, *, coerce: bool = False) -> None:
        """Replace the table's whole content with `rows`."""
        self._stage("overwrite", table, rows, partial=False, cast=coerce)

    def set_property(self, table: str, prop: str, rows: Any, *, coerce: bool = False) -> None:
        """Set `prop` for the rows keyed in `rows` (the key, or an edge's `id`, and `prop`;
        dicts, Arrow or pandas), writing only that column; keys not given keep their
        value. The type's rows take no other change in this transaction."""
        t = self._type(table)
        self._check_open()
        if any(c.table == t.name and c.prop == prop for c in self._columns):
            raise DataError(f"{t.name}.{prop}: set_property twice in one transaction")
        self._columns.append(stage(t, prop, rows, cast=coerce))

    def delete(self, table: str, keys: Iterable[Any] | Any, cascade: bool = False) -> None:
        """Delete nodes by key or edges by id. Nodes with edges need `cascade=True`."""
        t = self._type(table)
        if isinstance(keys, str | int) or not isinstance(keys, Iterable):
            keys = [keys]
        try:
            key_list = tuple(key_string(k) for k in keys)
        except TypeError as exc:
            raise DataError(f"{t.name}: delete takes keys (strings or integers): {exc}") from None
        if cascade and t.is_edge:
            raise DataError(f"{t.name}: cascade applies to node deletes only")
        self._check_open()
        self._ops.append(Op("delete", t.name, keys=key_list, cascade=cascade))

    def _stage(self, kind: OpKind, table: str, rows: Any, *, partial: bool, cast: bool) -> None:
        """`cast` (the callers' `coerce=True`): convert values of another type with
        Arrow's safe casts rather than refuse them (see `graphlake.write.coerce`)."""
        t = self._type(table)
        self._check_open()
        for group in _groups(rows) if partial else [rows]:
            coerced = coerce(t, group, partial=partial, cast=cast)
            if coerced.num_rows or kind == "overwrite":
                self._ops.append(Op(kind, t.name, rows=coerced))

    def _schema(self) -> Schema:
        """The schema of the branch head when the first row was staged: publishing
        refuses (StaleReadError) if the branch's schema changed since."""
        if self._schema_id is None:
            head = self._expect_head or self._reads.base
            commit = self._repo.commits.get(head) if head else self._repo.head(self.branch)
            self._schema_id = commit.schema_id
        return self._repo.schemas.get(self._schema_id)

    def _type(self, table: str) -> NodeType | EdgeType:
        schema = self._schema()
        t = schema.table(table)
        if t is None:
            known = ", ".join(schema.table_names)
            raise UnknownTableError(f"unknown node or edge type {table!r} (known: {known})")
        return t

    def _check_open(self) -> None:
        if self._done:
            raise GraphLakeError("this transaction has already been committed or discarded")

    # --- publishing -------------------------------------------------------------------

    @property
    def ops(self) -> list[Op]:
        return list(self._ops)

    def commit_now(self) -> Commit:
        """Publish the staged operations as one graph commit (the head if nothing changed)."""
        self._check_open()
        self._done = True
        with acting_as(self.author):
            self.commit = publish(
                self._repo,
                self.branch,
                self.message,
                self._ops,
                self.meta,
                reads=self._reads if self._reads.base else None,
                expect_head=self._expect_head,
                schema_id=self._schema_id,
                columns=self._columns,
            )
        return self.commit

    def discard(self) -> None:
        self._done = True
        self._ops.clear()
        self._columns.clear()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit_now()
        else:
            self.discard()


def _groups(rows: Any) -> list[Any]:
    """Split dict rows by the set of keys they give, so absent means "not provided"."""
    data = to_arrow_input(rows)
    if isinstance(data, pa.Table):
        return [data]
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for r in data:
        groups.setdefault(tuple(sorted(r)), []).append(r)
    return list(groups.values())
