"""The lineage walk that row history, blame and the change feed share.

From a commit, `first_parents` walks the first-parent chain newest first (catalog reads
only). `commit_changes` says what one commit changed against its first parent, per
table, as `RowChange`s (insert / update / delete, old -> new per changed property):

* a table whose pinned state is the parent's (same table id, Lance branch, version) is
  not read at all: most commits of a history touch few tables;
* otherwise Lance lineage (`storage.lineage.candidates`: the version deltas between the
  two states, O(changed rows)) gives the candidate keys; with `keys` asked for, only
  those of them are kept, and only their rows are read (by key, BTREE index) at both
  states and compared, so a change that nets to nothing is no change;
* where lineage cannot prove its answer (history cleaned by gc, a cross-lineage
  adoption: `LineageUnavailable`), the asked keys are read at both states directly
  (still by key), or, for a whole-table request, the merge's discovery walks both
  states (`merge.delta.discover`: correct, O(table));
* a commit that changes the schema is read through `merge.diff` (renamed and added
  properties projected into the commit's layout, as `diff` shows them).

A table is followed by its table id, so a renamed type keeps its history. A type the
commit adds or drops (or re-creates) yields no row entries: that is a schema change
(`diff` omits such types too). A merge commit's changes are its diff against its
first parent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake import probes
from graphlake.merge import diff as merge_diff
from graphlake.storage import lineage as lin

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit, TableState
    from graphlake.repo import Repo

Row = dict[str, Any]
INSERT, UPDATE, DELETE = "insert", "update", "delete"


@dataclass(frozen=True)
class RowChange:
    """One row's change in one commit: `old` / `new` are its rows before and after
    (None when absent), `changes` property -> (old, new) for every property that
    differs (all non-null ones for an insert or a delete)."""

    table: str
    key: str
    op: str
    old: Row | None
    new: Row | None
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": self.key,
            "op": self.op,
            "changes": {p: {"old": o, "new": n} for p, (o, n) in self.changes.items()},
        }


def first_parents(repo: Repo, head: Commit) -> Iterator[Commit]:
    """`head` and its first-parent ancestors, newest first (catalog reads only)."""
    commit: Commit | None = head
    while commit is not None:
        yield commit
        commit = repo.commits.get(commit.parents[0]) if commit.parents else None


def table_name(commit: Commit, table_id: str) -> str | None:
    """The name `commit` gives the table with id `table_id` (None: not in it)."""
    for name, state in commit.tables.items():
        if state.table_id == table_id:
            return name
    return None


def commit_changes(
    repo: Repo,
    commit: Commit,
    parent: Commit | None = None,
    *,
    table_ids: Iterable[str] | None = None,
    keys: set[str] | None = None,
) -> list[RowChange]:
    """What `commit` changed against `parent` (default its first parent; a root commit
    against nothing: no changes), sorted by (table, key). `table_ids`: only those
    tables; `keys`: only those keys (then nothing but those rows is read)."""
    if parent is None:
        if not commit.parents:
            return []
        parent = repo.commits.get(commit.parents[0])
    wanted = None if table_ids is None else set(table_ids)
    out: list[RowChange] = []
    for name in sorted(commit.tables):
        state = commit.tables[name]
        if wanted is not None and state.table_id not in wanted:
            continue
        before_name = table_name(parent, state.table_id)
        if before_name is None:
            continue  # a type this commit added (or re-created): a schema change
        before = parent.tables[before_name]
        if _same(before, state):
            continue
        probes.add("timeline_commits")
        if commit.schema_id != parent.schema_id:
            out += _through_diff(repo, parent, commit, name, keys)
        else:
            out += _by_lineage(repo, name, before, state, keys)
    return shown(repo, commit, out)


def table_changes(repo: Repo, name: str, before: TableState, after: TableState) -> list[RowChange]:
    """What changed in table `name` from `before` to `after` (one layout, no schema
    change between them), by lineage; values as stored (not yet `shown`)."""
    probes.add("timeline_commits")
    return _by_lineage(repo, name, before, after, None)


def same_state(a: TableState, b: TableState) -> bool:
    """Whether two table states are the very same (table id, Lance branch, version)."""
    return _same(a, b)


def _same(a: TableState, b: TableState) -> bool:
    return (a.table_id, a.lance_branch, a.version) == (b.table_id, b.lance_branch, b.version)


def _by_lineage(
    repo: Repo, name: str, before: TableState, after: TableState, keys: set[str] | None
) -> list[RowChange]:
    # on first use only: loads lance, duckdb, pyarrow (start-up time)
    from graphlake.merge.delta import discover, rows_for

    tables = repo.tables
    if keys is not None:
        try:
            found = lin.candidates(tables, before, after)
            touched = set(keys) & found.keys
        except lin.LineageUnavailable:
            touched = set(keys)  # cannot prove which changed: read them all, by key
        if not touched:
            return []
        delta = rows_for(tables.open(before), tables.open(after), touched)
        base, side = delta.base, delta.side
        changed = sorted(delta.keys)
    else:
        delta = discover(tables, before, after)  # lineage, else the walk
        if not delta:
            return []
        base, side = delta.base, delta.side
        changed = sorted(delta.keys)
    return [_change(name, k, base.get(k), side.get(k)) for k in changed]


def _through_diff(
    repo: Repo, parent: Commit, commit: Commit, name: str, keys: set[str] | None
) -> list[RowChange]:
    """A schema-changing commit: rows compared in the commit's layout (`merge.diff`)."""
    if keys is None:
        changes = merge_diff.diff(repo, parent.id, commit.id, only={name}).get(name)
        if changes is None:
            return []
        out = [_change(name, k, None, r) for k, r in changes.inserted_rows.items()]
        out += [_change(name, k, r, None) for k, r in changes.deleted_rows.items()]
        out += [
            RowChange(name, k, UPDATE, None, None, dict(props))
            for k, props in changes.changes.items()
        ]
        return sorted(out, key=lambda c: c.key)
    old_rows = _rows_at(repo, parent, table_name(parent, commit.tables[name].table_id), keys)
    new_rows = _rows_at(repo, commit, name, keys)
    project = merge_diff.layout_projection(repo, parent, commit, name)
    out = []
    for k in sorted(keys):
        old, new = old_rows.get(k), new_rows.get(k)
        if old is not None and project is not None:
            old = project(old)
        if old != new:
            out.append(_change(name, k, old, new))
    return out


def _rows_at(repo: Repo, commit: Commit, name: str | None, keys: set[str]) -> dict[str, Row]:
    """The rows of `keys` in table `name` at `commit`, read by key."""
    # on first use only: loads lance, pyarrow, numpy (start-up time)
    from graphlake.storage.lookup import rows_where_in

    if name is None or not keys:
        return {}
    found = rows_where_in(repo.tables.open(commit.tables[name]), "id", sorted(keys))
    return {r["id"]: r for r in found.to_pylist()}


def row_change(table: str, key: str, old: Row | None, new: Row | None) -> RowChange:
    """The change of one row from `old` to `new` (None: absent; not both None)."""
    return _change(table, key, old, new)


def _change(table: str, key: str, old: Row | None, new: Row | None) -> RowChange:
    op = INSERT if old is None else DELETE if new is None else UPDATE
    if old is not None and new is not None and old.keys() == new.keys():
        # one layout on both sides (the common case): the general rule below, faster
        props = {n: (old[n], v) for n, v in new.items() if n != "id" and old[n] != v}
        return RowChange(table, key, op, old, new, props)
    a, b = old or {}, new or {}
    names = [n for n in b if n != "id"] + [n for n in a if n not in b and n != "id"]
    props = {n: (a.get(n), b.get(n)) for n in names if a.get(n) != b.get(n)}
    return RowChange(table, key, op, old, new, props)


def shown(repo: Repo, commit: Commit, changes: list[RowChange]) -> list[RowChange]:
    """`changes` with float32 values as their shortest decimals (`read.floats`), as
    every reader shows them; the table layouts are `commit`'s."""
    return [shorten(c, _float32_columns(repo, commit, c.table)) for c in changes]


def shorten(c: RowChange, cols: set[str]) -> RowChange:
    """`c` with the values of the float32 columns `cols` as their shortest decimals."""
    if not cols:
        return c
    return RowChange(
        c.table,
        c.key,
        c.op,
        _short_row(c.old, cols),
        _short_row(c.new, cols),
        {p: (_short(o), _short(n)) if p in cols else (o, n) for p, (o, n) in c.changes.items()},
    )


def _float32_columns(repo: Repo, commit: Commit, table: str) -> set[str]:
    return float32_columns(repo.tables.open(commit.tables[table]).schema)


def float32_columns(schema: Any) -> set[str]:
    """The columns of an Arrow schema that hold float32 values (or lists of them)."""
    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow as pa

    def is32(t: pa.DataType) -> bool:
        if pa.types.is_float32(t):
            return True
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return is32(t.value_type)
        return False

    return {f.name for f in schema if is32(f.type)}


def _short_row(row: Row | None, cols: set[str]) -> Row | None:
    if row is None:
        return None
    return {k: _short(v) if k in cols else v for k, v in row.items()}


def _short(value: Any) -> Any:
    """A float32 value (widened to a Python float) as its shortest decimal."""
    if isinstance(value, float):
        # on first use only: loads numpy (start-up time)
        import numpy as np

        return float(str(np.float32(value)))
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def row_at(repo: Repo, commit: Commit, table_id: str, key: str) -> Row | None:
    """The row of `key` in the table with id `table_id` at `commit`, read by key, values
    shown as `commit_changes` shows them (None: no such row, or no such table)."""
    name = table_name(commit, table_id)
    if name is None:
        return None
    row = _rows_at(repo, commit, name, {key}).get(key)
    if row is None:
        return None
    return _short_row(row, _float32_columns(repo, commit, name))
