"""`Graph.diff(a, b)`: per table, what b has inserted, updated and deleted relative to a.

Changes are found by the merge's delta discovery (`merge.delta.discover`: lineage, else
the walk), so a diff costs what the changed rows cost, not a scan of both states. Every
count is exact; rows (values, old -> new per property) are kept for at most `limit` keys
per kind of change, the first ones in id order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import HistoryUnreadableError, MergeError, clean_message

if TYPE_CHECKING:
    from collections.abc import Callable

    from graphlake.catalog.commits import Commit, TableState
    from graphlake.merge.delta import TableDelta
    from graphlake.repo import Repo
    from graphlake.schema.changes import Step
    from graphlake.schema.model import EdgeType, NodeType, TableType

Row = dict[str, Any]
ENDPOINTS = ("src", "dst")


@dataclass
class TableDiff:
    """Changes of one table. `inserted`, `updated` and `deleted` list the first `limit`
    ids of each kind (as before paging existed); `counts` counts them all."""

    inserted: list[str] = field(default_factory=list)
    updated: dict[str, list[str]] = field(default_factory=dict)  # id -> changed properties
    deleted: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # inserted/updated/deleted: all
    changes: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)  # (old, new)
    inserted_rows: dict[str, Row] = field(default_factory=dict)  # id -> row (b's values)
    deleted_rows: dict[str, Row] = field(default_factory=dict)  # id -> row (a's values)
    endpoints: dict[str, tuple[str, str]] = field(default_factory=dict)  # edges: (src, dst)

    def __post_init__(self) -> None:
        for kind in ("inserted", "updated", "deleted"):
            self.counts.setdefault(kind, len(getattr(self, kind)))

    def __bool__(self) -> bool:
        return any(self.counts.values())

    @property
    def truncated(self) -> bool:
        """True when some changed ids are counted but not listed."""
        return any(self.counts[k] > len(getattr(self, k)) for k in self.counts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "inserted": self.inserted,
            "updated": self.updated,
            "deleted": self.deleted,
            "changes": {
                key: {p: {"old": old, "new": new} for p, (old, new) in props.items()}
                for key, props in self.changes.items()
            },
            "inserted_rows": list(self.inserted_rows.values()),
            "deleted_rows": list(self.deleted_rows.values()),
            "endpoints": {key: list(ends) for key, ends in self.endpoints.items()},
            "truncated": self.truncated,
        }


class GraphDiff(dict[str, TableDiff]):
    """Per table, its `TableDiff`; first, `schema_changes`: the schema steps from a's
    schema to b's (empty when both commits share one schema)."""

    def __init__(self, schema_changes: list[Step] | None = None) -> None:
        super().__init__()
        self.schema_changes: list[Step] = list(schema_changes or [])


def diff(
    repo: Repo, a: str, b: str, limit: int | None = None, only: set[str] | None = None
) -> GraphDiff:
    """Changes from `a` to `b` (any revision `Graph.resolve` takes): schema steps first,
    then per table its row changes, in b's layout (a renamed or added property is no
    row change); tables without change omitted, and so are types only one side has
    (their schema step says so). `limit`: rows kept per kind of change and table;
    `only`: just these tables (b's names)."""
    if limit is not None and limit < 0:
        raise MergeError(f"limit must be 0 or more, not {limit}")
    ca, cb = repo.resolve(a), repo.resolve(b)
    sa, sb = repo.schemas.of(ca), repo.schemas.of(cb)
    # On first use only: the schema package loads lark and pyarrow, and `graphlake log`
    # imports this module (tests/core/test_startup_imports.py). So below too.
    from graphlake.schema.changes import RenameType, describe_changes

    steps: list[Step] = []
    if ca.schema_id != cb.schema_id:
        steps = describe_changes(sa, sb)
    out = GraphDiff(steps)
    type_renames = {s.table: s.old for s in steps if isinstance(s, RenameType)}
    for name in sb.table_names:
        if only is not None and name not in only:
            continue
        source = type_renames.get(name, name)
        before, after = sa.table(source), sb.require(name)
        if before is None or ca.tables[source].table_id != cb.tables[name].table_id:
            continue  # a type b added (or dropped and re-created)
        project, added = (
            (None, {})
            if before.properties == after.properties
            else _projection(before, after, name, steps)
        )
        _readable(repo, ca, source)
        _readable(repo, cb, name)
        changes = table_diff(
            repo, ca.tables[source], cb.tables[name], limit, after.is_edge, project, added
        )
        if changes:
            out[name] = shown(changes, before, after, _renames(steps, name))
    return out


def _renames(steps: list[Step], table: str) -> dict[str, str]:
    """New property name -> old, for `table`'s properties renamed between a and b."""
    from graphlake.schema.changes import RenameProperty  # start-up: see diff()

    return {
        s.new.name: s.old.name for s in steps if isinstance(s, RenameProperty) and s.table == table
    }


def shown(
    changes: TableDiff,
    before: NodeType | EdgeType,
    after: NodeType | EdgeType,
    renames: dict[str, str],
) -> TableDiff:
    """`changes` with float32 values as their shortest decimal (`read.floats`): new
    values and inserted rows by b's types, old values and deleted rows by a's (under b's
    names). Only what is shown changes; which rows and properties changed was decided
    on the stored values."""
    from graphlake.read.floats import shortest_rows  # start-up: see diff()
    from graphlake.schema.arrow import arrow_schema  # start-up: see diff()

    new_types = {f.name: f.type for f in arrow_schema(after)}
    a_types = {f.name: f.type for f in arrow_schema(before)}
    old_types = {
        **new_types,
        **a_types,
        **{n: a_types[o] for n, o in renames.items() if o in a_types},
    }
    changes.inserted_rows = _keyed(changes.inserted_rows, new_types)
    changes.deleted_rows = _keyed(changes.deleted_rows, old_types)
    keys = list(changes.changes)
    olds = shortest_rows(
        [{p: v[0] for p, v in changes.changes[k].items()} for k in keys], old_types
    )
    news = shortest_rows(
        [{p: v[1] for p, v in changes.changes[k].items()} for k in keys], new_types
    )
    changes.changes = {
        k: {p: (o[p], n[p]) for p in changes.changes[k]}  # type: ignore[index]
        for k, o, n in zip(keys, olds, news, strict=True)
    }
    return changes


def _keyed(rows: dict[str, Row], types: dict[str, Any]) -> dict[str, Row]:
    from graphlake.read.floats import shortest_rows  # start-up: see diff()

    return dict(zip(rows, shortest_rows(list(rows.values()), types), strict=True))  # type: ignore[arg-type]


def layout_projection(repo: Repo, a: Commit, b: Commit, name: str) -> Callable[[Row], Row] | None:
    """Maps a row of table `name` (b's name) as `a` stores it into b's layout, as `diff`
    compares them (renamed properties under their new names, added ones at their
    default); None when both layouts are the same."""
    if a.schema_id == b.schema_id:
        return None
    from graphlake.schema.changes import RenameType, describe_changes  # start-up: see diff()

    sa, sb = repo.schemas.of(a), repo.schemas.of(b)
    steps = describe_changes(sa, sb)
    renames = {s.table: s.old for s in steps if isinstance(s, RenameType)}
    before, after = sa.table(renames.get(name, name)), sb.table(name)
    if before is None or after is None or before.properties == after.properties:
        return None
    return _projection(before, after, name, steps)[0]


def _readable(repo: Repo, commit: Commit, table: str) -> None:
    """Open `commit`'s state of `table`, or raise `HistoryUnreadableError` naming both."""
    state = commit.tables[table]
    try:
        repo.tables.open(state)
    except (OSError, ValueError, RuntimeError) as exc:
        raise HistoryUnreadableError(
            f"commit {commit.id[:12]}: table {table} cannot be read (Lance branch "
            f"{state.lance_branch}, version {state.version}): {clean_message(exc)}; "
            f"see `graphlake fsck --deep`"
        ) from None


def _projection(
    before: TableType, after: TableType, table: str, steps: list[Step]
) -> tuple[Callable[[Row], Row], dict[str, Any]]:
    """Maps a row of `before`'s layout to `after`'s: renamed properties under their new
    names, properties `before` lacks at their default (or null), dropped ones gone.
    Also returns those properties `before` lacks, with their defaults."""
    renames = _renames(steps, table)
    fixed = [c for c in ("id", *ENDPOINTS) if after.is_edge or c == "id"]
    props = [(p.name, renames.get(p.name, p.name), p.default) for p in after.properties]
    had = set(before.property_names)

    def project(row: Row) -> Row:
        out = {c: row.get(c) for c in fixed}
        for name, origin, default in props:
            out[name] = row.get(origin) if origin in had else default
        return out

    added = {name: default for name, origin, default in props if origin not in had}
    return project, added


def table_diff(
    repo: Repo,
    a: TableState,
    b: TableState,
    limit: int | None,
    edge: bool,
    project: Callable[[Row], Row] | None = None,
    added: dict[str, Any] | None = None,
) -> TableDiff:
    """One table's changes from state `a` to state `b`; `project` maps a's rows into
    b's layout when a schema change lies between them, `added` names the properties a
    lacks (with their defaults)."""
    from graphlake.merge.delta import discover, rows_for  # lance and duckdb: only here

    delta = discover(repo.tables, a, b)
    extra = _off_default(repo.tables.open(b), added or {})
    if extra - delta.keys:
        # A property a lacks holds a value b's Lance history never wrote (a merge
        # adopted a state whose column has another name in a's layout, say): lineage
        # cannot see such a row, the walk does; both answer the same only with it.
        path = delta.path
        delta = rows_for(repo.tables.open(a), repo.tables.open(b), delta.keys | extra)
        delta.path = path
    if not delta:
        return TableDiff()
    if delta.inserts is not None:  # insert-only via lineage: keys stay columnar
        return _inserts_only(repo, b, delta, limit, edge)
    inserted, deleted, updated = delta.inserted(), delta.deleted(), delta.updated()
    base = delta.base
    if project is not None:
        base = {key: project(row) for key, row in base.items()}
        # A layout change touches every row's version; only real value changes count.
        updated = [key for key in updated if _changed(base[key], delta.side[key])]
    shown = _first(updated, limit)
    changes = {key: _changed(base[key], delta.side[key]) for key in shown}
    out = TableDiff(
        inserted=_first(inserted, limit),
        updated={key: list(props) for key, props in changes.items()},
        deleted=_first(deleted, limit),
        counts={"inserted": len(inserted), "updated": len(updated), "deleted": len(deleted)},
        changes=changes,
    )
    out.inserted_rows = {key: delta.side[key] for key in out.inserted}
    out.deleted_rows = {key: base[key] for key in out.deleted}
    if edge:
        rows = {**out.inserted_rows, **out.deleted_rows, **{key: delta.side[key] for key in shown}}
        out.endpoints = {key: (row["src"], row["dst"]) for key, row in rows.items()}
    return out


def _off_default(ds: Any, added: dict[str, Any]) -> set[str]:
    """Keys of `ds` whose value of some `added` property is not its default: one narrow
    columnar scan, only when a's layout lacks properties b has."""
    if not added:
        return set()

    cols = [c for c in added if c in ds.schema.names]
    if not cols:
        return set()
    import pyarrow.compute as pc  # start-up: see diff()

    table = ds.to_table(columns=["id", *cols])
    out: set[str] = set()
    for c in cols:
        col, default = table.column(c), added[c]
        if default is None:
            mask = pc.is_valid(col)
            out.update(table.filter(mask).column("id").to_pylist())
        else:
            ids, values = table.column("id").to_pylist(), col.to_pylist()
            out.update(k for k, v in zip(ids, values, strict=True) if v != default)
    return out


def _inserts_only(
    repo: Repo, b: TableState, delta: TableDelta, limit: int | None, edge: bool
) -> TableDiff:
    """Counts from the columnar keys; only the listed rows are read, by key."""
    # on first use only: loads lance, pyarrow (start-up time)
    import pyarrow.compute as pc

    from graphlake.storage.lookup import rows_where_in  # lance: as above

    keys = delta.key_column()
    first = pc.sort_indices(keys)
    if limit is not None:
        first = first[:limit]
    shown = keys.take(first).to_pylist()
    rows = rows_where_in(repo.tables.open(b), "id", shown, distinct=True).to_pylist()
    by_id = {row["id"]: row for row in rows}
    out = TableDiff(inserted=shown, counts={"inserted": delta.size, "updated": 0, "deleted": 0})
    out.inserted_rows = {key: by_id[key] for key in shown}
    if edge:
        out.endpoints = {key: (row["src"], row["dst"]) for key, row in out.inserted_rows.items()}
    return out


def _first(keys: list[str], limit: int | None) -> list[str]:
    return keys if limit is None else keys[:limit]


def _changed(old: Row, new: Row) -> dict[str, tuple[Any, Any]]:
    """Property -> (old, new) for every property whose value differs (id excluded)."""
    names = [n for n in new if n != "id"] + [n for n in old if n not in new and n != "id"]
    return {n: (old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)}


def commit_stat(repo: Repo, commit: Commit) -> dict[str, dict[str, int]]:
    """Per table, how many rows `commit` inserted, updated and deleted against its first
    parent (a root commit: against nothing, so {}). Costs one delta discovery per table
    whose state the commit changed (lineage: O(changed rows)); no rows are kept."""
    if not commit.parents:
        return {}
    changes = diff(repo, commit.parents[0], commit.id, limit=0)
    return {name: dict(d.counts) for name, d in changes.items()}
