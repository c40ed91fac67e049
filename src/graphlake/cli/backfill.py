"""`graphlake backfill ROOT TYPE PROP FILE`: set one property for many rows, one commit.

FILE holds the rows' keys (an edge's `id`) and PROP's values: Parquet (by its
`.parquet` suffix) or JSONL. Only that column's data is written (`w.set_property`);
keys not in FILE keep their value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from graphlake.cli.edit import Coerce, Message, TypeName, jsonl_rows
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root, TargetBranch
from graphlake.cli.output import console, print_json, rows_phrase, short
from graphlake.errors import LoadFormatError
from graphlake.graph import Graph


def backfill(
    root: Root,
    table: TypeName,
    prop: Annotated[str, typer.Argument(help="The property to set.", show_default=False)],
    file: Annotated[
        Path,
        typer.Argument(
            help="Rows: the key (an edge's id) and the property; Parquet (.parquet) or JSONL.",
            exists=True,
            dir_okay=False,
            readable=True,
            show_default=False,
        ),
    ],
    branch: TargetBranch = DEFAULT_BRANCH,
    message: Message = None,
    coerce: Coerce = False,
    json: Json = False,
) -> None:
    """Set PROP of TABLE for the rows in FILE, writing only that column, as one commit."""
    rows = _read(file)
    n = rows.num_rows if hasattr(rows, "num_rows") else len(rows)
    g = Graph.open(root)
    before = g.head(branch)
    with g.write(branch, message or f"backfill {table}.{prop} ({rows_phrase(n)})") as w:
        w.set_property(table, prop, rows, coerce=coerce)
    after = w.commit
    assert after is not None
    summary = {
        "table": table,
        "property": prop,
        "rows": n,
        "branch": branch,
        "commit": after.id,
        "changed": after.id != before.id,
    }
    if json:
        print_json(summary)
        return
    console.print(
        f"Backfilled {escape(table)}.{escape(prop)} for {rows_phrase(n)} on "
        f"[cyan]{escape(branch)}[/] as commit [bold]{short(after.id)}[/]"
    )


def _read(file: Path) -> Any:
    if file.suffix.lower() != ".parquet":
        return list(jsonl_rows(file))
    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow as pa

    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow.parquet as pq

    try:
        return pq.read_table(file)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadFormatError(f"not a readable Parquet file: {exc}", path=str(file)) from None
