"""Staged operations and the per-table net effect they resolve to: the vocabulary that
writes, merges, constraint checks and fsck share (below all of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from graphlake.schema.model import EdgeType, NodeType

OpKind = Literal["insert", "upsert", "update", "delete", "overwrite"]


@dataclass(frozen=True)
class Op:
    """One staged call on a transaction, already coerced to the table's Arrow types."""

    kind: OpKind
    table: str
    rows: pa.Table | None = None  # insert / upsert / update / overwrite
    keys: tuple[str, ...] = ()  # delete
    cascade: bool = False  # delete: also delete edges touching the deleted nodes

    @property
    def data(self) -> pa.Table:
        """The rows of an insert, upsert, update or overwrite (a delete has none)."""
        if self.rows is None:
            raise ValueError(f"a {self.kind} on {self.table} carries no rows")
        return self.rows


@dataclass(frozen=True)
class ReadSet:
    """Keys a transaction read (table -> keys), all at commit `base`."""

    base: str | None
    keys: dict[str, set[str]]


@dataclass
class TablePlan:
    """The net effect of a transaction on one table, against the branch head.

    `inserted` and `updated_new` are complete rows to append; `updated_old` and
    `deleted_old` are the head's rows they replace or remove (read by key).
    """

    type: NodeType | EdgeType
    schema: pa.Schema
    inserted: pa.Table
    updated_old: pa.Table
    updated_new: pa.Table
    deleted_old: pa.Table
    delete_all: bool = False

    @property
    def name(self) -> str:
        return self.type.name

    @property
    def written(self) -> pa.Table:
        """Rows this plan appends: inserts, then the new images of updated rows. (An
        insert-only plan may hold only the checked columns: see `checked_columns`.)"""
        if not self.updated_new.num_rows:
            return self.inserted
        return pa.concat_tables([self.inserted, self.updated_new])

    @property
    def removed_ids(self) -> list[str]:
        """Ids whose head row goes away (deleted, or replaced by an update)."""
        return self.deleted_old.column("id").to_pylist() + self.updated_old.column("id").to_pylist()

    @property
    def deleted_ids(self) -> set[str]:
        return set(self.deleted_old.column("id").to_pylist())

    @property
    def inserted_ids(self) -> set[str]:
        return set(self.inserted.column("id").to_pylist())

    @property
    def is_empty(self) -> bool:
        return not (
            self.inserted.num_rows
            or self.updated_new.num_rows
            or self.deleted_old.num_rows
            or self.delete_all
        )
