"""Arguments and options shared by several commands, so they read the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.graph import DEFAULT_BRANCH

Root = Annotated[
    str, typer.Argument(help="Graph root: a local folder or an object-store URI (s3://…).")
]
Branch = Annotated[
    str,
    typer.Option(
        "--branch",
        "-b",
        help="Revision to read: a branch, a commit id "
        '(prefix), main~1, dev^2, ... (see README "Revisions").',
    ),
]
TargetBranch = Annotated[str, typer.Option("--branch", "-b", help="Branch to write to.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON to stdout and nothing else.")]

KEY_ORDER = "id"  # as graphlake.read.order.KEY_ORDER (not imported: it loads Lance)
OrderByOption = Annotated[
    str,
    typer.Option(
        "--order-by",
        metavar="COLS",
        help="Order rows by these columns, e.g. age,-name (-: descending).",
    ),
]
Unordered = Annotated[
    bool, typer.Option("--unordered", help="Storage order: no sort, fastest for bulk reads.")
]


def listing_order(order_by: str, unordered: bool) -> str | None:
    """The `order_by` a listing passes down: None (storage order) with --unordered."""
    if unordered and order_by != KEY_ORDER:
        raise typer.BadParameter("--unordered and --order-by exclude each other")
    return None if unordered else order_by


__all__ = [
    "DEFAULT_BRANCH",
    "KEY_ORDER",
    "Branch",
    "Json",
    "OrderByOption",
    "Root",
    "TargetBranch",
    "Unordered",
    "listing_order",
]
