"""`graphlake recover` and `graphlake fsck` (being built)."""

from __future__ import annotations

from graphlake.cli.options import Json, Root


def recover(root: Root, json: Json = False) -> None:
    """Finish or roll back publications a crashed process left unfinished."""
    raise NotImplementedError


def fsck(root: Root, json: Json = False) -> None:
    """Check the graph's invariants without changing anything."""
    raise NotImplementedError
