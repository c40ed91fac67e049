"""`Graph.diff(a, b)`: per table, what b has inserted, updated and deleted relative to a.

Changes are found by the merge's delta discovery (`merge.delta.discover`: lineage, else
the walk), so a diff costs what the changed rows cost, not a scan of both states. Every
count is exact; rows (values, old -> new per property) are kept for at most `limit` keys
per kind of change, the first ones in id order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import MergeError

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit, TableState
    from graphlake.graph import Graph
    from graphlake.merge.delta import TableDelta

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


def diff(graph: Graph, a: str, b: str, limit: int | None = None) -> dict[str, TableDiff]:
    """Changes from `a` to `b` (any revision `Graph.resolve` takes); tables without
    change omitted. `limit`: rows kept per kind of change and table (None: all)."""
    if limit is not None and limit < 0:
        raise MergeError(f"limit must be 0 or more, not {limit}")
    ca, cb = graph.resolve(a), graph.resolve(b)
    if ca.schema_id != cb.schema_id:
        raise MergeError(f"{a!r} and {b!r} have different schemas; cannot diff them")
    out: dict[str, TableDiff] = {}
    for name in graph.schema.table_names:
        changes = table_diff(graph, ca.tables[name], cb.tables[name], limit,
                             graph.schema.table(name).is_edge)
        if changes:
            out[name] = changes
    return out


def table_diff(
    graph: Graph, a: TableState, b: TableState, limit: int | None, edge: bool
) -> TableDiff:
    """One table's changes from state `a` to state `b`."""
    from graphlake.merge.delta import discover  # lance and duckdb: only when diffing

    delta = discover(graph.tables, a, b)
    if not delta:
        return TableDiff()
    if delta.inserts is not None:  # insert-only via lineage: keys stay columnar
        return _inserts_only(graph, b, delta, limit, edge)
    inserted, deleted, updated = delta.inserted(), delta.deleted(), delta.updated()
    shown = _first(updated, limit)
    changes = {key: _changed(delta.base[key], delta.side[key]) for key in shown}
    out = TableDiff(
        inserted=_first(inserted, limit),
        updated={key: list(props) for key, props in changes.items()},
        deleted=_first(deleted, limit),
        counts={"inserted": len(inserted), "updated": len(updated), "deleted": len(deleted)},
        changes=changes,
    )
    out.inserted_rows = {key: delta.side[key] for key in out.inserted}
    out.deleted_rows = {key: delta.base[key] for key in out.deleted}
    if edge:
        rows = {**out.inserted_rows, **out.deleted_rows,
                **{key: delta.side[key] for key in shown}}
        out.endpoints = {key: (row["src"], row["dst"]) for key, row in rows.items()}
    return out


def _inserts_only(
    graph: Graph, b: TableState, delta: TableDelta, limit: int | None, edge: bool
) -> TableDiff:
    """Counts from the columnar keys; only the listed rows are read, by key."""
    import pyarrow.compute as pc

    from graphlake.storage.lookup import rows_where_in

    keys = delta.key_column()
    first = pc.sort_indices(keys)
    if limit is not None:
        first = first[:limit]
    shown = keys.take(first).to_pylist()
    rows = rows_where_in(graph.tables.open(b), "id", shown, distinct=True).to_pylist()
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


def commit_stat(graph: Graph, commit: Commit) -> dict[str, dict[str, int]]:
    """Per table, how many rows `commit` inserted, updated and deleted against its first
    parent (a root commit: against nothing, so {}). Costs one delta discovery per table
    whose state the commit changed (lineage: O(changed rows)); no rows are kept."""
    if not commit.parents:
        return {}
    changes = diff(graph, commit.parents[0], commit.id, limit=0)
    return {name: dict(d.counts) for name, d in changes.items()}
