"""`graphlake gc` (being built)."""

from __future__ import annotations

from graphlake.cli.options import Json, Root


def gc(root: Root, json: Json = False) -> None:
    """Reclaim table versions and files no branch needs."""
    raise NotImplementedError
