"""`Graph.diff(a, b)`: per table, what b has inserted, updated and deleted relative to a."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlake.errors import MergeError
from graphlake.merge.delta import discover

if TYPE_CHECKING:
    from graphlake.graph import Graph


@dataclass
class TableDiff:
    inserted: list[str] = field(default_factory=list)
    updated: dict[str, list[str]] = field(default_factory=dict)  # id -> changed properties
    deleted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inserted or self.updated or self.deleted)

    def to_dict(self) -> dict[str, Any]:
        return {"inserted": self.inserted, "updated": self.updated, "deleted": self.deleted}


def diff(graph: Graph, a: str, b: str) -> dict[str, TableDiff]:
    """Changes from `a` to `b` (branch names or commit ids); tables without change omitted."""
    ca, cb = graph.resolve(a), graph.resolve(b)
    if ca.schema_id != cb.schema_id:
        raise MergeError(f"{a!r} and {b!r} have different schemas; cannot diff them")
    out: dict[str, TableDiff] = {}
    for name in graph.schema.table_names:
        delta = discover(graph.tables, ca.tables[name], cb.tables[name])
        if not delta:
            continue
        updated = {
            k: [p for p in delta.side[k] if delta.side[k][p] != delta.base[k].get(p)]
            for k in delta.updated()
        }
        out[name] = TableDiff(delta.inserted(), updated, delta.deleted())
    return out
