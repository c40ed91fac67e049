"""JSON <-> graph values. Output reuses the CLI's conversion (dates ISO, bytes base64,
vectors as lists, NaN as null); input decodes base64 strings for `Blob` properties, so a
row read from the API can be written back unchanged."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import pyarrow as pa

from graphlake.cli.output import jsonable, table_rows
from graphlake.errors import TypeMismatchError
from graphlake.schema.model import EdgeType, NodeType

__all__ = ["columns_and_rows", "decode_rows", "jsonable", "table_rows"]


def decode_rows(t: NodeType | EdgeType, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with base64 strings in `Blob` properties replaced by their bytes."""
    blobs = [p.name for p in t.properties if p.type.kind == "Blob"]
    if not blobs:
        return rows
    out = []
    for row in rows:
        row = dict(row)
        for name in blobs:
            value = row.get(name)
            if isinstance(value, str):
                row[name] = _b64(t.name, name, value)
        out.append(row)
    return out


def _b64(table: str, prop: str, value: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise TypeMismatchError(
            f"{table}.{prop}: expected Blob as a base64 string, got {value[:40]!r}"
        ) from None


def columns_and_rows(table: pa.Table) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows as lists (SQL results may repeat a column name)."""
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = [jsonable(list(r)) for r in zip(*columns, strict=True)] if columns else []
    return list(table.column_names), rows
