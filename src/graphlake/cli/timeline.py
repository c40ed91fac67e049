"""`graphlake history` (the commits that changed one row), `graphlake blame` (the
commit that set each property's current value) and `graphlake changes` (the change
feed, page by page or followed)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from graphlake.cli.interrupt import EXIT_INTERRUPTED
from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import cell, console, print_json, printable, short, short_time
from graphlake.graph import Graph

if TYPE_CHECKING:
    from graphlake.timeline.feed import ChangePage

TypeArg = Annotated[str, typer.Argument(help="Node or edge type.")]
KeyArg = Annotated[str, typer.Argument(help="The row's key (a node key or an edge id).")]


def _changes_text(changes: dict[str, tuple[Any, Any]]) -> Text:
    """One line per property: `name: old -> new`."""
    out = Text()
    for i, (prop, (old, new)) in enumerate(changes.items()):
        if i:
            out.append("\n")
        out.append(f"{printable(prop)}: ")
        out.append_text(cell(old))
        out.append(" -> ")
        out.append_text(cell(new))
    return out


def _name(author: str) -> str:
    """The author's name without the email (the tables have no room; --json has it)."""
    return author.split(" <", 1)[0]


def history(
    root: Root,
    type: TypeArg,
    key: KeyArg,
    branch: Branch = DEFAULT_BRANCH,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show at most N commits.")
    ] = None,
    json: Json = False,
) -> None:
    """The commits that changed one row, newest first along BRANCH's first parents:
    time, author, insert/update/delete and old -> new per property."""
    entries = Graph.open(root).row_history(type, key, branch, limit=limit)
    if json:
        print_json([e.to_dict() for e in entries])
        return
    out = Table(
        title=f"history of {printable(type)} {printable(key)} on {printable(branch)}",
        title_justify="left",
    )
    out.add_column("commit", no_wrap=True)
    out.add_column("time (UTC)", no_wrap=True)
    out.add_column("author", overflow="fold")
    out.add_column("op", no_wrap=True)
    out.add_column("changes", overflow="fold", ratio=1)
    for e in entries:
        out.add_row(
            short(e.commit),
            short_time(e.time),
            Text(printable(_name(e.author))),
            e.op,
            _changes_text(e.changes),
        )
    console.print(out)


def blame(
    root: Root, type: TypeArg, key: KeyArg, branch: Branch = DEFAULT_BRANCH, json: Json = False
) -> None:
    """For each property of the row at BRANCH, the commit that set its current value
    (following merges into the branch that made the change, as git blame does)."""
    lines = Graph.open(root).blame(type, key, branch)
    if json:
        print_json([b.to_dict() for b in lines])
        return
    out = Table(
        title=f"blame of {printable(type)} {printable(key)} on {printable(branch)}",
        title_justify="left",
    )
    out.add_column("property", overflow="fold")
    out.add_column("value", overflow="fold", ratio=1)
    out.add_column("commit", no_wrap=True)
    out.add_column("time (UTC)", no_wrap=True)
    out.add_column("author", overflow="fold")
    for b in lines:
        out.add_row(
            Text(printable(b.property)),
            cell(b.value),
            short(b.commit),
            short_time(b.time),
            Text(printable(_name(b.author))),
        )
    console.print(out)


def changes(
    root: Root,
    branch: Annotated[str, typer.Option("--branch", "-b", help="Branch to read.")] = DEFAULT_BRANCH,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Resume after this cursor (printed by the last page); default: "
            "from the beginning of the branch's history.",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=10_000, help="At most N entries a page.")
    ] = 1000,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", help="Keep polling for new commits (Ctrl-C stops, exit 130)."
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=0.1, help="Seconds between polls with --follow.")
    ] = 2.0,
    json: Json = False,
) -> None:
    """The change feed of BRANCH: every row change, oldest first along first parents,
    then the cursor to resume from (`--since`). With --json: one object per page,
    {"changes": [...], "cursor": "..."} (one line a page with --follow)."""
    g = Graph.open(root)
    try:
        while True:
            page = g.changes(branch, since=since, limit=limit)
            since = page.cursor
            if not follow:
                _print_page(page, json, branch)
                return
            if page.entries:
                _print_page(page, json, branch)
            if len(page.entries) < limit:
                time.sleep(interval)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _print_page(page: ChangePage, json: bool, branch: str) -> None:
    if json:
        print_json(page.to_dict())
        return
    out = Table(title=f"changes of {printable(branch)}", title_justify="left")
    out.add_column("commit", no_wrap=True)
    out.add_column("table", overflow="fold")
    out.add_column("key", overflow="fold")
    out.add_column("op", no_wrap=True)
    out.add_column("changes", overflow="fold", ratio=1)
    for e in page.entries:
        out.add_row(
            short(e.commit),
            Text(printable(e.table)),
            Text(printable(e.key)),
            e.op,
            _changes_text(e.changes),
        )
    console.print(out)
    console.print(f"cursor: {page.cursor}", soft_wrap=True, highlight=False)
