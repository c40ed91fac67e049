"""`graphlake revert` and `graphlake cherry-pick`: merge-engine applications of one
commit's changes (see merge/apply.py), reported like `merge`, with its exit codes:
0 applied or nothing to do, 1 conflicts (also of a dry run), 2 any other failure."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer
from rich.markup import escape

from graphlake.cli.merge import (
    EXIT_CONFLICTS,
    DryRun,
    Into,
    Message,
    Strategy,
    merge_errors,
    print_merge,
    routes_table,
)
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root, TargetBranch
from graphlake.cli.output import console, print_json, short
from graphlake.graph import Graph
from graphlake.merge.result import ALREADY_UP_TO_DATE, CONFLICT, MERGED, MergeResult

Rev = Annotated[
    str,
    typer.Argument(
        help="The commit whose changes to take: a commit id (prefix), a branch or tag, main~2, ..."
    ),
]
Mainline = Annotated[
    int | None,
    typer.Option(
        "--mainline",
        min=1,
        help="For a merge commit: the parent (1-based) its changes are taken against (default 1).",
    ),
]
StrategyOpt = Annotated[
    Strategy | None,
    typer.Option(
        help="Resolve data conflicts: ours keeps the branch's values, theirs takes the "
        "applied change's."
    ),
]


def revert(
    root: Root,
    rev: Rev,
    branch: TargetBranch = DEFAULT_BRANCH,
    mainline: Mainline = None,
    dry_run: DryRun = False,
    strategy: StrategyOpt = None,
    message: Message = None,
    json: Json = False,
) -> None:
    """Undo what REV changed against its parent, as one new commit on --branch.

    Exit codes: 0 reverted / nothing to undo, 1 conflicts, 2 error.
    """
    _report(
        "Reverted",
        lambda: Graph.open(root).revert(
            rev,
            branch,
            mainline=mainline,
            dry_run=dry_run,
            strategy=strategy and strategy.value,
            message=message,
        ),
        rev,
        branch,
        json,
    )


def cherry_pick(
    root: Root,
    rev: Rev,
    into: Into = DEFAULT_BRANCH,
    mainline: Mainline = None,
    dry_run: DryRun = False,
    strategy: StrategyOpt = None,
    message: Message = None,
    json: Json = False,
) -> None:
    """Apply what REV changed against its parent onto --into, as one new commit.

    Exit codes: 0 picked / already there, 1 conflicts, 2 error.
    """
    _report(
        "Picked",
        lambda: Graph.open(root).cherry_pick(
            rev,
            into,
            mainline=mainline,
            dry_run=dry_run,
            strategy=strategy and strategy.value,
            message=message,
        ),
        rev,
        into,
        json,
    )


def _report(verb: str, run: Callable[[], MergeResult], rev: str, branch: str, json: bool) -> None:
    """As `merge` reports, with a first line that says what was applied."""
    with merge_errors(json, rev, branch):
        result = run()
    if json:
        print_json(result.to_dict())
    else:
        what, where = f"[cyan]{escape(rev)}[/]", f"[cyan]{escape(branch)}[/]"
        if result.outcome == MERGED and not result.dry_run:
            console.print(
                f"{verb} {what} on {where} as commit [bold]{short(result.commit or '')}[/]"
            )
        elif result.outcome == MERGED:
            console.print(f"Dry run: {what} applies cleanly on {where}; nothing changed")
        elif result.outcome == ALREADY_UP_TO_DATE:
            console.print(f"{where} already has what {what} would change; nothing to do")
        else:
            print_merge(result)
            raise typer.Exit(EXIT_CONFLICTS)
        if result.stats and result.outcome != ALREADY_UP_TO_DATE:
            console.print(routes_table(result))
    if result.outcome == CONFLICT:
        raise typer.Exit(EXIT_CONFLICTS)
