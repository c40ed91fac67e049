"""Arguments and options shared by several commands, so they read the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.graph import DEFAULT_BRANCH

Root = Annotated[
    str, typer.Argument(help="Graph root: a local folder or an object-store URI (s3://…).")
]
Branch = Annotated[
    str, typer.Option("--branch", "-b", help="Revision to read: a branch, a commit id "
                      "(prefix), main~1, dev^2, ... (see README \"Revisions\").")
]
TargetBranch = Annotated[str, typer.Option("--branch", "-b", help="Branch to write to.")]
Json = Annotated[
    bool, typer.Option("--json", help="Print JSON to stdout and nothing else.")
]

__all__ = ["DEFAULT_BRANCH", "Branch", "Json", "Root", "TargetBranch"]
