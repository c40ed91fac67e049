"""`graphlake reset` (move a branch to any revision) and `graphlake reflog` (every move
of a branch, newest first)."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, plain_table, print_json, printable, short, short_time
from graphlake.graph import Graph


def reset(
    root: Root,
    branch: Annotated[str, typer.Argument(help="Branch to move.")],
    rev: Annotated[
        str, typer.Argument(help="Where to: any revision (commit id, tag, main~2, ...).")
    ],
) -> None:
    """Move BRANCH to REV (one compare-and-swap, recorded in the reflog; undo it with
    another reset to the old commit `graphlake reflog` lists)."""
    g = Graph.open(root)
    old = g.head(branch).id
    entry = g.reset_branch(branch, rev)
    console.print(
        f"Reset [cyan]{printable(branch)}[/] from {short(old)} to "
        f"{short(entry.commit or '')} (undo: graphlake reset ROOT "
        f"{printable(branch)} {short(old)})"
    )


def reflog(
    root: Root,
    branch: Annotated[
        str, typer.Option("--branch", "-b", help="Branch (also a deleted one).")
    ] = DEFAULT_BRANCH,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="Show at most N entries.")
    ] = None,
    json: Json = False,
) -> None:
    """Every move of BRANCH, newest first: time, author, action, old -> new."""
    entries = Graph.open(root).reflog(branch, limit=limit)
    if json:
        print_json([e.to_dict() for e in entries])
        return
    console.print(
        plain_table(
            ["#", "time (UTC)", "author", "action", "old -> new"],
            [
                [
                    str(e.seq),
                    short_time(e.time),
                    printable(e.author),
                    e.action,
                    f"{short(e.old) if e.old else '-'} -> {short(e.new) if e.new else '-'}",
                ]
                for e in entries
            ],
            title=f"reflog of {printable(branch)}",
        )
    )
