"""`graphlake log`, `graphlake show` and `graphlake sql`: read-only commands."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from graphlake.catalog.commits import Commit, changes_schema
from graphlake.catalog.tags import tags_by_commit
from graphlake.cli.interrupt import Timeout, interruptible
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
from graphlake.cli.output import (
    arrow_table,
    console,
    print_json,
    printable,
    rows_phrase,
    short,
    short_time,
    table_rows,
)
from graphlake.graph import Graph
from graphlake.lanes import Drawing, Lanes
from graphlake.merge.diff import commit_stat


def log(
    root: Root,
    branch: Branch = DEFAULT_BRANCH,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show at most N commits.")
    ] = None,
    graph: Annotated[bool, typer.Option("--graph", help="Draw the commit graph.")] = False,
    stat: Annotated[
        bool,
        typer.Option(
            "--stat",
            help="Rows inserted/updated/deleted per table, against the first parent.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Commits reachable from BRANCH (any revision), newest first; `-b A...B`: the
    commits of B since the merge base of A and B. Read lazily: a page costs a page."""
    g = Graph.open(root)
    commits = g.log(branch, limit=limit)
    tagged = tags_by_commit(g.tags())
    if json:
        print_json([{**_commit_dict(g, c, stat), "tags": tagged.get(c.id, [])} for c in commits])
    elif graph or stat:
        print_log_lines(g, commits, graph, stat, tagged)
    else:
        console.print(_log_table(g, list(commits), tagged, branch))


PARENT_ID = 7  # parents in the log table: git's short id length


def _log_table(g: Graph, commits: list[Commit], tagged: dict[str, list[str]], branch: str) -> Table:
    """The log as a table that reads at 80 columns: ids, times and parents (7 hex, one a
    line, as git's short ids) are never broken; the message and author wrap by words."""
    out = Table(title=f"log of {escape(branch)}", title_justify="left")
    out.add_column("commit", no_wrap=True)
    out.add_column("time (UTC)", no_wrap=True)
    out.add_column("author", overflow="fold")
    out.add_column("message", overflow="fold", ratio=1)
    out.add_column("parents", no_wrap=True)
    for c in commits:
        out.add_row(
            short(c.id),
            short_time(c.time),
            Text(printable(_author_name(c))),
            Text(_decorated(tagged, c) + _marked(g, c)),
            "\n".join(p[:PARENT_ID] for p in c.parents) or "-",
        )
    return out


def _commit_dict(g: Graph, c: Commit, stat: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": c.id,
        "time": c.time,
        "author": c.author_text,
        "message": c.message,
        "parents": list(c.parents),
        "schema_change": changes_schema(g.repo.commits, c),
    }
    if stat:
        out["stat"] = commit_stat(g.repo, c)
    return out


def _author_name(c: Commit) -> str:
    """The author's name alone (the table has no room for emails; `--json` has them)."""
    return c.author.name if c.author is not None else "unknown"


def _decorated(tagged: dict[str, list[str]], c: Commit) -> str:
    """`(tag: v1, v2) ` before the message of a tagged commit, as git log --decorate."""
    names = tagged.get(c.id)
    return f"(tag: {printable(', '.join(names))}) " if names else ""


def _marked(g: Graph, c: Commit) -> str:
    message = printable(c.message)
    return f"[schema] {message}" if changes_schema(g.repo.commits, c) else message


def print_log_lines(
    g: Graph,
    commits: Iterable[Commit],
    graph: bool,
    stat: bool,
    tagged: dict[str, list[str]] | None = None,
) -> None:
    """One line per commit as it is read (so a long log starts at once), with the lanes
    of `--graph` before it and the per-table counts of `--stat` under it."""
    lanes = Lanes()
    for c in commits:
        drawn = lanes.draw(c.id, c.parents) if graph else Drawing([], "", "", [])
        for line in drawn.before:
            console.print(Text(line))
        console.print(
            Text.assemble(
                drawn.prefix,
                (short(c.id), "yellow"),
                f" {short_time(c.time)} ",
                (_author_name(c), "cyan"),
                " ",
                (_decorated(tagged or {}, c), "yellow"),
                _marked(g, c),
            ),
            soft_wrap=True,
        )
        for table, n in (commit_stat(g.repo, c) if stat else {}).items():
            console.print(
                Text(f"{drawn.under}    {table} +{n['inserted']} ~{n['updated']} -{n['deleted']}")
            )
        for line in drawn.after:
            console.print(Text(line))


def show(
    root: Root,
    table: Annotated[str, typer.Argument(help="Node or edge type.")],
    branch: Branch = DEFAULT_BRANCH,
    where: Annotated[
        str | None, typer.Option("--where", "-w", help='SQL filter, e.g. "age > 30".')
    ] = None,
    columns: Annotated[
        str | None, typer.Option("--columns", "-c", help="Comma-separated columns.")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=0, help="At most N rows (0: all).")
    ] = 20,
    order_by: OrderByOption = KEY_ORDER,
    unordered: Unordered = False,
    json: Json = False,
) -> None:
    """Rows of a node or edge type on BRANCH, by key unless --order-by or --unordered."""
    snapshot = Graph.open(root).snapshot(branch)
    wanted = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    rows = snapshot.read(
        table, None, where, wanted, limit or None, listing_order(order_by, unordered)
    )
    if json:
        print_json(table_rows(rows))
        return
    title = f"{escape(table)} @ {escape(branch)} ({short(snapshot.commit.id)})"
    console.print(arrow_table(rows, title=title))
    more = limit and rows.num_rows == limit
    console.print(
        f"first {rows_phrase(limit)}; --limit 0 shows all" if more else rows_phrase(rows.num_rows),
        style="dim",
    )


def sql(
    root: Root,
    query: Annotated[str, typer.Argument(help="One read-only SELECT statement.")],
    branch: Branch = DEFAULT_BRANCH,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Fail rather than return more rows.")
    ] = 10_000,
    json: Json = False,
    timeout: Timeout = None,
) -> None:
    """Run read-only SQL (DuckDB) over BRANCH; tables are named after their types. Ctrl-C
    stops it (exit 130)."""
    # on first use only: loads lance, duckdb, pyarrow (start-up time)
    from graphlake.read.sql import DEFAULT_TIMEOUT_S

    timeout_s = timeout or DEFAULT_TIMEOUT_S
    result = interruptible(
        lambda: Graph.open(root).sql(query, branch, max_rows=max_rows, timeout_s=timeout_s),
        timeout_s,
    )
    if json:
        print_json(table_rows(result))
        return
    console.print(arrow_table(result))
    console.print(f"{rows_phrase(result.num_rows)} @ {escape(branch)}", style="dim")
