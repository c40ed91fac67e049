"""`graphlake log`, `graphlake show` and `graphlake sql`: read-only commands."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import (
    arrow_table,
    console,
    plain_table,
    print_json,
    rows_phrase,
    short,
    short_time,
    table_rows,
)
from graphlake.graph import Graph


def log(
    root: Root,
    branch: Branch = DEFAULT_BRANCH,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1,
                                              help="Show at most N commits.")] = None,
    json: Json = False,
) -> None:
    """Commits reachable from BRANCH (any revision), newest first; `-b A...B`: the
    commits of B since the merge base of A and B."""
    commits = Graph.open(root).log(branch, limit=limit)
    if json:
        print_json([{"id": c.id, "time": c.time, "message": c.message,
                     "parents": list(c.parents)} for c in commits])
        return
    console.print(plain_table(
        ["commit", "time (UTC)", "message", "parents"],
        [[short(c.id), short_time(c.time), c.message, " ".join(map(short, c.parents)) or "-"]
         for c in commits],
        title=f"log of {escape(branch)}",
    ))


def show(
    root: Root,
    table: Annotated[str, typer.Argument(help="Node or edge type.")],
    branch: Branch = DEFAULT_BRANCH,
    where: Annotated[str | None, typer.Option("--where", "-w",
                                              help="SQL filter, e.g. \"age > 30\".")] = None,
    columns: Annotated[str | None, typer.Option("--columns", "-c",
                                                help="Comma-separated columns.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=0,
                                       help="At most N rows (0: all).")] = 20,
    json: Json = False,
) -> None:
    """Rows of a node or edge type on BRANCH."""
    snapshot = Graph.open(root).snapshot(branch)
    wanted = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    rows = snapshot.read(table, None, where, wanted, limit or None)
    if json:
        print_json(table_rows(rows))
        return
    title = f"{escape(table)} @ {escape(branch)} ({short(snapshot.commit.id)})"
    console.print(arrow_table(rows, title=title))
    more = limit and rows.num_rows == limit
    console.print(f"first {rows_phrase(limit)}; --limit 0 shows all" if more
                  else rows_phrase(rows.num_rows), style="dim")


def sql(
    root: Root,
    query: Annotated[str, typer.Argument(help="One read-only SELECT statement.")],
    branch: Branch = DEFAULT_BRANCH,
    max_rows: Annotated[int, typer.Option("--max-rows", min=1,
                                          help="Fail rather than return more rows.")] = 10_000,
    json: Json = False,
) -> None:
    """Run read-only SQL (DuckDB) over BRANCH; tables are named after their types."""
    result = Graph.open(root).sql(query, branch, max_rows=max_rows)
    if json:
        print_json(table_rows(result))
        return
    console.print(arrow_table(result))
    console.print(f"{rows_phrase(result.num_rows)} @ {escape(branch)}", style="dim")
