"""`graphlake export`: a table or a query result to Parquet, CSV or JSONL, of any size.

Rows stream as record batches from the Lance scanner (a table) or DuckDB's Arrow reader
(a query) into the format's writer, so memory holds about one batch whatever the size.
DuckDB's own `COPY` is not an option: queries run without file access. Output goes to a
temporary file beside FILE that replaces it only once complete, so a failed export leaves
no partial file and an existing FILE is untouched (and refused without `--force`).

Blob bytes stay binary in Parquet; in CSV and JSONL they are base64 text, as everywhere
graphlake shows blobs as text. Lists and vectors are JSON arrays in CSV.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import typer
from rich.markup import escape
from ulid import ULID

from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import CommandError, console, jsonable, print_json, rows_phrase, short
from graphlake.graph import Graph
from graphlake.read.snapshot import Snapshot
from graphlake.read.sql import sql_stream

SCAN_BATCH_ROWS = 8192  # rows per batch read from a Lance table


class Format(StrEnum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"


_SUFFIXES = {".parquet": Format.parquet, ".pq": Format.parquet, ".csv": Format.csv,
             ".jsonl": Format.jsonl, ".ndjson": Format.jsonl}

Batches = tuple[pa.Schema, Iterator[pa.RecordBatch]]


def export(
    root: Root,
    table: Annotated[str | None, typer.Argument(help="Node or edge type to export.",
                                                show_default=False)] = None,
    query: Annotated[str | None, typer.Option("--query", "-q",
                                              help="Export the result of this SELECT.")] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.",
                                         dir_okay=False, show_default=False)] = ...,  # type: ignore[assignment]
    format: Annotated[Format | None, typer.Option(
        "--format", help="Default: from FILE's suffix (.parquet, .csv, .jsonl).")] = None,
    branch: Branch = DEFAULT_BRANCH,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    json: Json = False,
) -> None:
    """Write TABLE, or the result of --query, on BRANCH to FILE, streaming any size."""
    if (table is None) == (query is None):
        raise CommandError("export takes a TABLE or --query SQL (exactly one of them)")
    fmt = format or _format_of(output)
    if output.exists() and not force:
        raise CommandError(f"{output} exists; pass --force to replace it")
    if not output.parent.is_dir():
        raise CommandError(f"{output.parent} is not a folder")
    snapshot = Graph.open(root).snapshot(branch)
    source: AbstractContextManager[Batches]
    if table is not None:
        source = nullcontext(_table_batches(snapshot, table))
    else:
        source = sql_stream(snapshot, query or "")
    with source as (schema, batches):
        rows = _write_atomically(output, force, lambda f: _WRITERS[fmt](f, schema, batches))
    summary = {"file": str(output), "format": fmt.value, "rows": rows, "branch": branch,
               "commit": snapshot.commit.id, "table": table, "query": query}
    if json:
        print_json(summary)
        return
    what = escape(table) if table is not None else "the query result"
    console.print(f"Exported {rows_phrase(rows)} of {what} @ {escape(branch)} "
                  f"({short(snapshot.commit.id)}) to {escape(str(output))} ({fmt.value})")


def _format_of(output: Path) -> Format:
    fmt = _SUFFIXES.get(output.suffix.lower())
    if fmt is None:
        raise CommandError(f"cannot tell the format from {output.name!r}: pass --format "
                           f"parquet, csv or jsonl")
    return fmt


def _table_batches(snapshot: Snapshot, name: str) -> Batches:
    ds = snapshot.dataset(snapshot.type(name).name)
    return ds.schema, iter(ds.to_batches(batch_size=SCAN_BATCH_ROWS))


def _write_atomically(output: Path, force: bool, write: Callable[[BinaryIO], int]) -> int:
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


_WRITERS: dict[Format, Callable[[BinaryIO, pa.Schema, Iterator[pa.RecordBatch]], int]] = {
    Format.parquet: _parquet,
    Format.csv: _csv,
    Format.jsonl: _jsonl,
}
