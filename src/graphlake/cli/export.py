"""`graphlake export`: a table or a query result to Parquet, CSV or JSONL, of any size.

Rows stream as record batches from the Lance scanner (a table) or DuckDB's Arrow reader
(a query) into the format's writer. A table is exported by key (`id`) unless
`--order-by` names other columns; Lance sorts it first, which holds the table in memory
(see the README's "Performance"). `--unordered` streams in storage order, so memory holds
about one batch whatever the size: the option for bulk exports.
A `--query` runs in `read.sql`'s sandboxed connection (no file access); only the JSONL
writer uses DuckDB's `COPY`, in a connection of its own (see `export_writers`). Output goes to a
temporary file beside FILE that replaces it only once complete, so a failed export leaves
no partial file and an existing FILE is untouched (and refused without `--force`).

Blob bytes stay binary in Parquet; in CSV and JSONL they are base64 text, as everywhere
graphlake shows blobs as text. Lists and vectors are JSON arrays in CSV.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from graphlake.cli.export_format import Format
from graphlake.cli.options import (
    DEFAULT_BRANCH,
    KEY_ORDER,
    Branch,
    Json,
    OrderByOption,
    Root,
    Unordered,
    listing_order,
)
from graphlake.cli.output import CommandError, console, print_json, rows_phrase, short
from graphlake.graph import Graph

_SUFFIXES = {
    ".parquet": Format.parquet,
    ".pq": Format.parquet,
    ".csv": Format.csv,
    ".jsonl": Format.jsonl,
    ".ndjson": Format.jsonl,
}


def export(
    root: Root,
    table: Annotated[
        str | None, typer.Argument(help="Node or edge type to export.", show_default=False)
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Export the result of this SELECT.")
    ] = None,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="File to write.", dir_okay=False, show_default=False),
    ] = ...,  # type: ignore[assignment]
    format: Annotated[
        Format | None,
        typer.Option("--format", help="Default: from FILE's suffix (.parquet, .csv, .jsonl)."),
    ] = None,
    branch: Branch = DEFAULT_BRANCH,
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
    order_by: OrderByOption = KEY_ORDER,
    unordered: Unordered = False,
    json: Json = False,
) -> None:
    """Write TABLE (by key unless --order-by or --unordered), or the result of --query,
    on BRANCH to FILE."""
    if (table is None) == (query is None):
        raise CommandError("export takes a TABLE or --query SQL (exactly one of them)")
    order = listing_order(order_by, unordered)
    if query is not None and order != KEY_ORDER:
        raise CommandError(
            "--order-by and --unordered apply to a TABLE; a --query orders with ORDER BY"
        )
    fmt = format or _format_of(output)
    if output.exists() and not force:
        raise CommandError(f"{output} exists; pass --force to replace it")
    if not output.parent.is_dir():
        raise CommandError(f"{output.parent} is not a folder")
    from graphlake.cli import export_writers as W  # pyarrow's writers, Lance, DuckDB

    # on first use only: loads lance, duckdb, pyarrow (start-up time)
    from graphlake.read.sql import sql_stream

    # A read lease for the whole export: gc keeps the commit while it is written out.
    with Graph.open(root).snapshot(branch).leased() as snapshot:
        source: AbstractContextManager[W.Batches]
        if table is not None:
            source = nullcontext(W.table_batches(snapshot, table, order))
        else:
            source = sql_stream(snapshot, query or "")
        with source as (schema, batches):
            rows = W.write_atomically(output, force, lambda f: W.WRITERS[fmt](f, schema, batches))
    summary = {
        "file": str(output),
        "format": fmt.value,
        "rows": rows,
        "branch": branch,
        "commit": snapshot.commit.id,
        "table": table,
        "query": query,
    }
    if json:
        print_json(summary)
        return
    what = escape(table) if table is not None else "the query result"
    console.print(
        f"Exported {rows_phrase(rows)} of {what} @ {escape(branch)} "
        f"({short(snapshot.commit.id)}) to {escape(str(output))} ({fmt.value})"
    )


def _format_of(output: Path) -> Format:
    fmt = _SUFFIXES.get(output.suffix.lower())
    if fmt is None:
        raise CommandError(
            f"cannot tell the format from {output.name!r}: pass --format parquet, csv or jsonl"
        )
    return fmt
