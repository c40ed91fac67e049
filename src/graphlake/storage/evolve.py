"""Change one Lance table's layout in place: Lance's schema evolution, CAS-checked.

Every action is one Lance commit on a Lance branch the caller's graph branch owns:
renames, nullability changes and drops rewrite only the manifest; an all-null column
writes no data; a filled default and a widening cast write that one column; a new index
reads one column. No action rewrites rows. Like `TableStore.apply`, a moved Lance branch
raises `LanceCasError` (the caller forks and retries).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import lance
import pyarrow as pa

from graphlake.catalog.commits import TableState
from graphlake.storage.tables import LanceCasError, TableStore


@dataclass(frozen=True)
class ColumnFill:
    """A new non-null column, every existing row set to `value`."""

    field: pa.Field
    value: Any


@dataclass
class LayoutChange:
    """What to do to one table, applied in this order."""

    drop: list[str] = field(default_factory=list)
    rename: dict[str, str] = field(default_factory=dict)  # old column name -> new
    retype: dict[str, pa.DataType] = field(default_factory=dict)  # by new name
    nullable: dict[str, bool] = field(default_factory=dict)  # by new name
    add_null: list[pa.Field] = field(default_factory=list)
    add_filled: list[ColumnFill] = field(default_factory=list)
    index: list[str] = field(default_factory=list)  # new BTREE indexes
    metadata: dict[str, str] | None = None  # replaces the schema metadata

    @property
    def is_empty(self) -> bool:
        return not (
            self.drop
            or self.rename
            or self.retype
            or self.nullable
            or self.add_null
            or self.add_filled
            or self.index
            or self.metadata is not None
        )


def evolve(tables: TableStore, state: TableState, change: LayoutChange) -> TableState:
    """Apply `change` to the table at `state` (a Lance branch its owner may append to)."""
    lock = tables.cas_lock(state.table_id, state.lance_branch)
    ds = tables._checkout(tables._open_latest(state.table_id, commit_lock=lock), state)

    def step() -> None:
        lock.expected = ds.version + 1  # exactly the next version, or it moved

    try:
        if change.drop:
            step()
            ds.drop_columns(change.drop)
        for old, new in change.rename.items():
            step()
            _alter(ds, {"path": old, "name": new})
        for name, data_type in change.retype.items():
            # Lance refuses to cast an indexed column (the cast rewrites its data):
            # drop its indexes, cast, and build them again on the new values.
            indexed = [i["name"] for i in ds.list_indices() if name in i["fields"]]
            for index in indexed:
                step()
                ds.drop_index(index)
            step()
            _alter(ds, {"path": name, "data_type": data_type})
            if indexed:
                step()
                ds.create_scalar_index(name, "BTREE")
        for name, nullable in change.nullable.items():
            step()
            _alter(ds, {"path": name, "nullable": nullable})
        if change.add_null:
            step()
            ds.add_columns(change.add_null)
        for fill in change.add_filled:
            step()
            ds.add_columns(_filler(fill), read_columns=["id"])
        for column in change.index:
            step()
            ds.create_scalar_index(column, "BTREE")
        if change.metadata is not None:
            step()
            metadata: dict[str, str | None] = dict(change.metadata)
            ds.update_schema_metadata(metadata, replace=True)
    except OSError as exc:
        raise tables.cas_failure(state, lock, exc) from exc
    return TableState(state.table_id, state.lance_branch, ds.version, state.owner)


def _alter(ds: lance.LanceDataset, alteration: dict[str, Any]) -> None:
    """One `alter_columns` call. Lance annotates each argument as an iterable of
    `AlterColumn` dicts but takes one dict per argument (as its docs show), and its
    `AlterColumn` requires every key; hence the untyped pass-through."""
    ds.alter_columns(cast(Any, alteration))


def _filler(fill: ColumnFill) -> Any:
    # A batch UDF rather than an SQL expression: its output has exactly the column's
    # Arrow type (DataFusion would type `3` as Int64 and `'x'` as Utf8 only).
    schema = pa.schema([fill.field])

    @lance.batch_udf(output_schema=schema)
    def constant(batch: pa.RecordBatch) -> pa.RecordBatch:
        column = pa.array([fill.value] * batch.num_rows, fill.field.type)
        return pa.RecordBatch.from_arrays([column], schema=schema)

    return constant


__all__ = ["ColumnFill", "LanceCasError", "LayoutChange", "evolve"]
