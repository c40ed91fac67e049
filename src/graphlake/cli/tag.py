"""`graphlake tag create|list|delete`: names that mark one commit forever."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, plain_table, print_json, printable, short, short_time
from graphlake.graph import Graph

app = typer.Typer(
    help="Create, list and delete tags (a tag names one commit forever).", no_args_is_help=True
)

Name = Annotated[str, typer.Argument(help="Tag name (the branch name rules).")]


@app.command("create")
def create(
    root: Root,
    name: Name,
    rev: Annotated[
        str, typer.Argument(help="Revision to tag: a branch, tag, commit id (prefix), main~1, ...")
    ] = DEFAULT_BRANCH,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="What the tag marks.")
    ] = None,
    json: Json = False,
) -> None:
    """Tag the commit REV names as NAME. An existing tag or branch NAME is refused."""
    tag = Graph.open(root).tag(name, rev, message)
    if json:
        print_json(tag.to_dict())
        return
    console.print(
        f"Tagged {short(tag.commit)} as [cyan]{printable(name)}[/] (from {printable(rev)})"
    )


@app.command("list")
def list_(root: Root, json: Json = False) -> None:
    """List tags with their commit, time, author and message."""
    tags = Graph.open(root).tags()
    if json:
        print_json([t.to_dict() for t in tags.values()])
        return
    console.print(
        plain_table(
            ["tag", "commit", "time (UTC)", "author", "message"],
            [
                [
                    printable(t.name),
                    short(t.commit),
                    short_time(t.time),
                    printable(t.author.name if t.author else "unknown"),
                    printable(t.message or ""),
                ]
                for t in tags.values()
            ],
        )
    )


@app.command("delete")
def delete(root: Root, name: Name) -> None:
    """Delete tag NAME (its commits stay while a branch or another tag reaches them)."""
    tag = Graph.open(root).delete_tag(name)
    console.print(f"Deleted tag [cyan]{printable(name)}[/] (was {short(tag.commit)})")
