"""`graphlake optimize`: compact fragments and refresh indexes without changing content."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import console, print_json, short
from graphlake.graph import Graph

# The defaults of `search.upkeep` (not imported here: it loads Lance; a test pins them equal).
UNCOVERED_FRACTION = 0.10
UNCOVERED_ROWS = 100_000


def _positive_fraction(value: float) -> float:
    if not 0 < value <= 100:
        raise typer.BadParameter(f"{value} is not in (0, 100]")
    return value


def optimize(
    root: Root,
    branch: Annotated[str, typer.Option("--branch", "-b", help="Branch to optimize.")] = (
        DEFAULT_BRANCH
    ),
    if_needed: Annotated[
        bool,
        typer.Option(
            "--if-needed",
            help="Only if a search index has passed the threshold (cheap to run from cron).",
        ),
    ] = False,
    uncovered_fraction: Annotated[
        float,
        typer.Option(
            callback=_positive_fraction,
            help="--if-needed: uncovered rows per indexed row that make an index due.",
        ),
    ] = UNCOVERED_FRACTION,
    uncovered_rows: Annotated[
        int,
        typer.Option(
            min=1, help="--if-needed: uncovered rows that make an index due whatever its size."
        ),
    ] = UNCOVERED_ROWS,
    json: Json = False,
) -> None:
    """Compact small fragments, fold index deltas and build or retrain the declared
    search indexes on BRANCH, as one commit that changes no rows (none if there is
    nothing to do)."""
    g = Graph.open(root)
    before = g.head(branch).id
    due: list = []
    threshold = None
    if if_needed:
        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.search.upkeep import Threshold

        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.search.upkeep import due as due_indexes

        threshold = Threshold(uncovered_fraction, uncovered_rows)
        due = due_indexes(g.snapshot(branch), threshold)  # to report; optimize checks again
    commit = g.optimize(branch, if_needed=if_needed, threshold=threshold)
    changed = sorted(
        n for n, st in commit.tables.items() if st != g.repo.commits.get(before).tables[n]
    )
    if json:
        out = {
            "branch": branch,
            "commit": commit.id,
            "changed": commit.id != before,
            "tables": changed,
        }
        if if_needed:
            out["due"] = [d.to_dict() for d in due]
        print_json(out)
        return
    for d in due:
        console.print(f"due: {d}")
    if if_needed and not due:
        console.print(
            f"{branch}: search indexes below the threshold, nothing to do (head {short(before)})"
        )
    elif commit.id == before:
        console.print(f"{branch}: nothing to optimize (head {short(before)})")
    else:
        console.print(f"{branch}: optimized {', '.join(changed)} in commit {short(commit.id)}")
