"""`graphlake mr open|list|show|approve|comment|merge|close`: merge requests on a local
root (see docs/guides/merge.md "Merge requests").

Local access is administrative: the CLI opens the graph's files directly, so the server's
`[branches."NAME"]` rules (required approvals, required checks, merges only through
requests) do not bind it, as git's server-side hooks do not bind the repository's owner.
The request's own integrity still holds: the author cannot approve their own request, a
merged or closed request never changes. Who acts is the global `--author` (default
$GRAPHLAKE_AUTHOR, the config file, then the OS user).

`mr merge` exits like `merge`: 0 merged, 1 conflicts or a failing data check, 2 any other
error.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape

from graphlake.cli.merge import ResolveFile, Strategy, load_resolutions, merge_errors, print_merge
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, plain_table, print_json, printable, short
from graphlake.graph import Graph

app = typer.Typer(
    help="Open, list, show, approve, comment on, merge and close merge requests.",
    no_args_is_help=True,
)

Id = Annotated[int, typer.Argument(help="The merge request's number.", min=1)]


class State(StrEnum):
    open = "open"
    merged = "merged"
    closed = "closed"


def _print(mr: Any, json: bool, verb: str) -> None:
    if json:
        print_json(mr.to_dict())
        return
    console.print(
        f"{verb} merge request [bold]#{mr.id}[/] ({escape(printable(mr.source))} into "
        f"{escape(printable(mr.into))}, {mr.state}): {escape(printable(mr.title))}"
    )


@app.command("open")
def open_(
    root: Root,
    source: Annotated[str, typer.Argument(help="Branch to merge.")],
    title: Annotated[str, typer.Option("--title", "-t", help="What the request is for.")],
    into: Annotated[str, typer.Option("--into", "-i", help="Branch to merge into.")] = (
        DEFAULT_BRANCH
    ),
    description: Annotated[str, typer.Option("--description", "-d", help="More words.")] = "",
    json: Json = False,
) -> None:
    """Open a request to merge branch SOURCE into --into."""
    mr = Graph.open(root).reviews.open(source, into, title, description)
    _print(mr, json, "Opened")


@app.command("list")
def list_(
    root: Root,
    state: Annotated[State | None, typer.Option(help="Only requests in this state.")] = None,
    json: Json = False,
) -> None:
    """List merge requests, newest first."""
    found = Graph.open(root).reviews.list(state and state.value)
    if json:
        print_json([mr.to_dict() for mr in found])
        return
    console.print(
        plain_table(
            ["#", "state", "source", "into", "author", "title"],
            [
                [
                    str(mr.id),
                    mr.state,
                    printable(mr.source),
                    printable(mr.into),
                    printable(mr.author),
                    printable(mr.title),
                ]
                for mr in found
            ],
        )
    )


@app.command("show")
def show(root: Root, rid: Id, json: Json = False) -> None:
    """One request with its preview at the branches' current heads: outcome, conflicts,
    data checks on the merged result, approvals."""
    reviews = Graph.open(root).reviews
    mr = reviews.get(rid)
    preview = reviews.preview(mr)
    if json:
        print_json({**mr.to_dict(), "preview": preview})
        return
    _print(mr, False, "")
    for event in mr.events:
        text = f": {event['text']}" if event.get("text") else ""
        console.print(f"  {event['time']} {event['kind']} by {printable(event['by'])}{text}")
    if mr.state != "open":
        return
    console.print(
        f"preview: {preview['outcome']}, {len(preview['conflicts'])} conflict(s), "
        f"{len(preview['approvals'])} approval(s) at source {short(preview['source_head'])} "
        f"/ target {short(preview['target_head'])}"
    )
    for check in preview.get("data_checks") or []:
        mark = "[green]pass[/]" if check["passed"] else "[red]FAIL[/]"
        console.print(f"  data check {mark} {printable(check['name'])}")
    for reason in preview["blocked_by"]:
        console.print(f"  blocked: {printable(reason)}")


@app.command("approve")
def approve(root: Root, rid: Id, json: Json = False) -> None:
    """Approve at the current heads (the author cannot approve their own request)."""
    _print(Graph.open(root).reviews.approve(rid), json, "Approved")


@app.command("comment")
def comment(
    root: Root,
    rid: Id,
    text: Annotated[str, typer.Argument(help="The comment.")],
    json: Json = False,
) -> None:
    """Comment on a request."""
    _print(Graph.open(root).reviews.comment(rid, text), json, "Commented on")


@app.command("close")
def close(root: Root, rid: Id, json: Json = False) -> None:
    """Close a request without merging it."""
    _print(Graph.open(root).reviews.close(rid), json, "Closed")


@app.command("merge")
def merge(
    root: Root,
    rid: Id,
    strategy: Annotated[
        Strategy | None,
        typer.Option(help="Resolve data conflicts: ours keeps the target's values."),
    ] = None,
    resolve: ResolveFile = None,
    json: Json = False,
) -> None:
    """Merge a request's source into its target as one commit recording the request.

    Exit codes: 0 merged, 1 conflicts or a failing data check, 2 error.
    """
    resolutions = load_resolutions(resolve) if resolve is not None else None
    g = Graph.open(root)
    mr = g.reviews.get(rid)
    with merge_errors(json, mr.source, mr.into):
        merged = g.reviews.merge(rid, resolutions=resolutions, strategy=strategy and strategy.value)
    if json:
        print_json({**merged.to_dict(), "result": merged.result.to_dict()})
        return
    print_merge(merged.result)
    _print(merged, False, "Merged")
