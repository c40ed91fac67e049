"""The writers behind `graphlake export` (see `graphlake.cli.export`): record batches from
a Lance scan or a DuckDB Arrow reader into Parquet, CSV or JSONL, written atomically.

Kept apart from the command so the CLI's start-up imports none of pyarrow's writers,
Lance or DuckDB (`graphlake --help` stays fast).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from ulid import ULID

from graphlake.cli.export import Format
from graphlake.cli.output import CommandError, jsonable
from graphlake.read.snapshot import Snapshot

SCAN_BATCH_ROWS = 8192  # rows per batch read from a Lance table

Batches = tuple[pa.Schema, Iterator[pa.RecordBatch]]


def table_batches(snapshot: Snapshot, name: str) -> Batches:
    ds = snapshot.dataset(snapshot.type(name).name)
    return ds.schema, iter(ds.to_batches(batch_size=SCAN_BATCH_ROWS))


def write_atomically(output: Path, force: bool, write: Callable[[BinaryIO], int]) -> int:
    """Write into a temporary file beside `output`, then move it into place: replacing
    `output` with `force`, else only if it still does not exist (a hard link fails on an
    existing name, so a file created meanwhile is never overwritten)."""
    tmp = output.with_name(f".{output.name}.{ULID()}.tmp")
    try:
        with tmp.open("xb") as f:
            rows = write(f)
        if force:
            os.replace(tmp, output)
        else:
            try:
                os.link(tmp, output)
            except FileExistsError:
                raise CommandError(f"{output} exists; pass --force to replace it") from None
        return rows
    finally:
        tmp.unlink(missing_ok=True)


# --- formats ---------------------------------------------------------------------------


def _parquet(f: BinaryIO, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
    rows = 0
    with pq.ParquetWriter(f, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def _csv(f: BinaryIO, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
    text_schema = pa.schema([_csv_field(field) for field in schema])
    rows = 0
    with pacsv.CSVWriter(f, text_schema) as writer:
        for batch in batches:
            writer.write_batch(pa.record_batch(
                [_csv_column(batch.column(i)) for i in range(batch.num_columns)],
                schema=text_schema))
            rows += batch.num_rows
    return rows


def _csv_field(field: pa.Field) -> pa.Field:
    return field.with_type(pa.string()) if _as_text(field.type) else field


def _as_text(ty: pa.DataType) -> bool:
    """Columns CSV cannot hold as they are: bytes (as base64) and nested values (JSON)."""
    return (pa.types.is_binary(ty) or pa.types.is_large_binary(ty)
            or pa.types.is_fixed_size_binary(ty) or pa.types.is_nested(ty))


def _csv_column(column: pa.Array) -> pa.Array:
    if not _as_text(column.type):
        return column
    return pa.array([_text(v) for v in column.to_pylist()], type=pa.string())


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return json.dumps(jsonable(value), ensure_ascii=False)


def _jsonl(f: BinaryIO, schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> int:
    rows = 0
    for batch in batches:
        lines = (json.dumps(jsonable(row), ensure_ascii=False, allow_nan=False)
                 for row in batch.to_pylist())
        f.write("".join(f"{line}\n" for line in lines).encode("utf-8"))
        rows += batch.num_rows
    return rows


WRITERS: dict[Format, Callable[[BinaryIO, pa.Schema, Iterator[pa.RecordBatch]], int]] = {
    Format.parquet: _parquet,
    Format.csv: _csv,
    Format.jsonl: _jsonl,
}
