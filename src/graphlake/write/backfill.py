"""`w.set_property(type, prop, rows)`: set one property for many rows, column-wise.

Staging coerces and checks the given values (type, null, enum/range/check, domains);
publishing checks them against the head (every key exists; `@unique` over the whole
resulting column) and writes only that column's data (`storage.columns`). Keys not
given keep their value. A table a transaction backfills takes no row operations in the
same transaction: the row path rewrites whole rows, which would defeat the column write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.values import value_violations
from graphlake.errors import (
    DataError,
    DuplicateKeyError,
    KeyNotFoundError,
    UniqueViolationError,
    UnknownPropertyError,
)
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.model import EdgeType, NodeType
from graphlake.storage.lookup import rows_where_in
from graphlake.write.coerce import coerce, to_arrow_input
from graphlake.write.validate import value_error

if TYPE_CHECKING:
    import lance

    from graphlake.catalog.commits import TableState
    from graphlake.storage.tables import TableStore

SHOWN = 20  # offending keys an error lists
# Commit meta of a backfill: {table: [properties]}. A merge reads it to take the
# column route (`graphlake.merge.columns`) instead of comparing every backfilled row.
BACKFILL_META = "backfill"


@dataclass(frozen=True)
class ColumnWrite:
    """One staged `set_property`: ids and their new values, already coerced."""

    type: NodeType | EdgeType
    prop: str
    ids: pa.Array  # string row ids, distinct
    values: pa.Array

    @property
    def table(self) -> str:
        return self.type.name

    @property
    def field(self) -> pa.Field:
        return arrow_schema(self.type).field(self.prop)


def stage(t: NodeType | EdgeType, prop: str, rows: Any, *, cast: bool = False) -> ColumnWrite:
    """Coerce and check `rows` (the key, or an edge's `id`, plus `prop`)."""
    p = t.property(prop)
    if p is None:
        raise UnknownPropertyError(
            f"{t.name} has no property {prop!r} (declared: {', '.join(t.property_names)})"
        )
    if isinstance(t, NodeType) and prop == t.key:
        raise DataError(f"{t.name}.{prop} is the key; a backfill cannot change keys")
    key = t.key if isinstance(t, NodeType) else "id"
    data = to_arrow_input(rows)
    given = set(data.column_names) if isinstance(data, pa.Table) else {k for r in data for k in r}
    if given != {key, prop}:
        raise DataError(
            f"{t.name}: set_property rows give exactly {key!r} and {prop!r} "
            f"(got: {', '.join(sorted(given)) or 'nothing'})"
        )
    table = coerce(t, data, partial=True, cast=cast)
    if isinstance(t, EdgeType) and table.column("id").null_count:
        raise DataError(f"{t.name}: set_property rows need the edge id")
    found = value_violations(t, table.select(["id", prop]))
    if found:
        raise value_error(t.name, found[:SHOWN])
    ids = table.column("id").combine_chunks()
    if pc.count_distinct(ids).as_py() != len(ids):
        counts = pc.value_counts(ids)
        twice = [v["values"] for v in counts.to_pylist() if v["counts"] > 1]
        raise DuplicateKeyError(f"{t.name}: keys given twice: {_listed(twice)}")
    return ColumnWrite(t, prop, ids, table.column(prop).combine_chunks())


def check_against(ds: lance.LanceDataset, write: ColumnWrite) -> None:
    """Refuse keys the table does not have, and `@unique` clashes in the result."""
    present = rows_where_in(ds, "id", write.ids, ["id"], distinct=True).column("id")
    if len(present) != len(write.ids):
        missing = pc.filter(write.ids, pc.invert(pc.is_in(write.ids, value_set=present)))
        raise KeyNotFoundError(
            f"{write.table}: cannot set {write.prop} for keys that do not exist: "
            f"{_listed(missing.to_pylist())}"
        )
    check_unique(ds, write)


def check_unique(ds: lance.LanceDataset, write: ColumnWrite) -> None:
    """Every `@unique` covering the property, over the whole resulting column(s)."""
    for cols in write.type.uniques:
        if write.prop in cols:
            _check_unique(ds, write, cols)


def _check_unique(ds: lance.LanceDataset, write: ColumnWrite, cols: tuple[str, ...]) -> None:
    """Only these columns are read, never whole rows."""
    head = ds.to_table(columns=["id", *cols])
    at = pc.index_in(head.column("id"), value_set=write.ids)
    new = pc.if_else(
        pc.is_valid(at), pc.take(write.values, at), head.column(write.prop).cast(write.values.type)
    )
    result = head.set_column(head.schema.get_field_index(write.prop), write.prop, new)
    valid = result.filter(_all_valid(result, cols))  # nulls never clash
    groups = valid.group_by(list(cols)).aggregate([("id", "count"), ("id", "list")])
    clashes = groups.filter(pc.greater(groups.column("id_count"), 1))
    if clashes.num_rows:
        shown = [
            f"{', '.join(f'{c}={r[c]!r}' for c in cols)} on {r['id_list']}"
            for r in clashes.slice(0, SHOWN).to_pylist()
        ]
        raise UniqueViolationError(
            f"{write.table}: @unique({', '.join(cols)}) violated: {'; '.join(shown)}"
        )


def _all_valid(table: pa.Table, cols: tuple[str, ...]) -> pa.ChunkedArray:
    mask = pc.is_valid(table.column(cols[0]))
    for c in cols[1:]:
        mask = pc.and_(mask, pc.is_valid(table.column(c)))
    return mask


def apply(
    tables: TableStore, state: TableState, write: ColumnWrite, index_columns: list[str]
) -> TableState:
    """Write the column on the owned Lance branch at `state`."""
    return tables.replace_column(
        state, write.field, write.ids, write.values, reindex=write.prop in index_columns
    )


def backfill_meta(writes: list[ColumnWrite]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for w in writes:
        props = out.setdefault(w.table, [])
        if w.prop not in props:
            props.append(w.prop)
    return out


def _listed(keys: list[Any]) -> str:
    more = f" (and {len(keys) - SHOWN} more)" if len(keys) > SHOWN else ""
    return ", ".join(map(repr, keys[:SHOWN])) + more
