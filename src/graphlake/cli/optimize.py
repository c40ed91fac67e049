"""`graphlake optimize`: compact fragments and refresh indexes without changing content."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, print_json, short
from graphlake.graph import Graph


def optimize(
    root: Root,
    branch: Annotated[str, typer.Option("--branch", "-b", help="Branch to optimize.")] = (
        DEFAULT_BRANCH
    ),
    json: Json = False,
) -> None:
    """Compact small fragments, fold index deltas and build or retrain the declared
    search indexes on BRANCH, as one commit that changes no rows (none if there is
    nothing to do)."""
    g = Graph.open(root)
    before = g.head(branch).id
    commit = g.optimize(branch)
    changed = sorted(n for n, st in commit.tables.items()
                     if st != g.commits.get(before).tables[n])
    if json:
        print_json({"branch": branch, "commit": commit.id, "changed": commit.id != before,
                    "tables": changed})
        return
    if commit.id == before:
        console.print(f"{branch}: nothing to optimize (head {short(before)})")
    else:
        console.print(f"{branch}: optimized {', '.join(changed)} in commit {short(commit.id)}")
