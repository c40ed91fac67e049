"""`graphlake branch create|list|delete`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, plain_table, print_json, short, short_time
from graphlake.graph import Graph

app = typer.Typer(help="Create, list and delete branches.", no_args_is_help=True)

Name = Annotated[str, typer.Argument(help="Branch name.")]


@app.command("create")
def create(
    root: Root,
    name: Name,
    from_: Annotated[
        str,
        typer.Option(
            "--from",
            help="Revision the new branch starts at: a branch, "
            "a commit id (prefix), main~1, dev^2, ...",
        ),
    ] = DEFAULT_BRANCH,
) -> None:
    """Create branch NAME at the head of --from (O(1): nothing is copied)."""
    g = Graph.open(root)
    g.create_branch(name, from_=from_)
    console.print(f"Created branch [cyan]{name}[/] at {short(g.head(name).id)} (from {from_})")


@app.command("list")
def list_(root: Root, json: Json = False) -> None:
    """List branches with their head commit."""
    g = Graph.open(root)
    default = g.repo.info.default_branch
    rows: list[dict[str, Any]] = []
    for name in g.branches():
        head = g.head(name)
        rows.append(
            {
                "name": name,
                "default": name == default,
                "head": head.id,
                "time": head.time,
                "message": head.message,
            }
        )
    if json:
        print_json(rows)
        return
    console.print(
        plain_table(
            ["branch", "head", "time (UTC)", "message"],
            [
                [
                    ("* " if r["default"] else "  ") + r["name"],
                    short(r["head"]),
                    short_time(r["time"]),
                    r["message"],
                ]
                for r in rows
            ],
        )
    )


@app.command("delete")
def delete(root: Root, name: Name) -> None:
    """Delete branch NAME (only the name: commits are never rewritten)."""
    g = Graph.open(root)
    g.delete_branch(name)
    console.print(f"Deleted branch [cyan]{name}[/]")
