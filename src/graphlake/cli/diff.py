"""`graphlake diff ROOT A B`: per table, what B inserted, updated and deleted relative to A."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from graphlake.cli.options import Json, Root
from graphlake.cli.output import console, print_json, truncated
from graphlake.graph import Graph

if TYPE_CHECKING:  # merge.diff imports Lance
    from graphlake.merge.diff import TableDiff

DEFAULT_SHOWN = 10


def diff(
    root: Root,
    a: Annotated[str, typer.Argument(help="Branch or commit id to compare from.")],
    b: Annotated[str, typer.Argument(help="Branch or commit id to compare to.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=0,
                                       help="At most N ids per list (0: all).")] = DEFAULT_SHOWN,
    json: Json = False,
) -> None:
    """What B inserted, updated (which properties) and deleted relative to A, per table.

    A direct comparison: rows only A holds show as deleted, whichever branch wrote them.
    """
    changes = Graph.open(root).diff(a, b)
    if json:
        print_json({table: d.to_dict() for table, d in changes.items()})
        return
    print_diff(changes, a, b, limit)


def print_diff(changes: dict[str, TableDiff], a: str, b: str,
               limit: int = DEFAULT_SHOWN) -> None:
    if not changes:
        console.print(f"No differences: [cyan]{escape(a)}[/] and [cyan]{escape(b)}[/] "
                      "hold the same rows")
        return
    console.print(diff_table(changes, f"diff {escape(a)} → {escape(b)}", limit))


def diff_table(changes: dict[str, TableDiff], title: str, limit: int) -> Table:
    """One row per table and kind of change: how many, and which ids (truncated)."""
    out = Table("table", "change", Column("count", justify="right"), Column("ids", overflow="fold"),
                title=title, title_justify="left")
    for table, d in changes.items():
        updated = [f"{key} ({', '.join(props)})" for key, props in d.updated.items()]
        for change, ids in (("inserted", d.inserted), ("updated", updated),
                            ("deleted", d.deleted)):
            if ids:
                out.add_row(table, change, str(len(ids)), Text(truncated(ids, limit)))
    return out
