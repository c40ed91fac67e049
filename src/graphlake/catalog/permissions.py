"""Branch permissions: the branch patterns the caller may change, checked where refs and
tags change.

The server runs each request of a token limited to patterns (`branches = ["dev/*"]` in
its config entry) inside `restricted_to(patterns)`; every state change then checks the
branch it changes: a publication before its first table effect (writes, loads, merges,
reverts, cherry-picks, schema changes, optimize), and every ref move, branch create or
delete, tag create or delete. A refusal is a `BranchPermissionError` naming the rule
(HTTP 403) and changes nothing. Patterns are `fnmatch` patterns on the whole name (`*`
also matches `/`). Outside `restricted_to` (the library, the CLI, tokens without
patterns) every branch may change: the library acts with the rights of whoever owns the
files. Reads are never restricted.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
from collections.abc import Iterator, Sequence

from graphlake.errors import BranchPermissionError

__all__ = ["check_branch", "restricted_to"]

_allowed: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "graphlake_branch_patterns", default=None
)


@contextlib.contextmanager
def restricted_to(patterns: Sequence[str] | None) -> Iterator[None]:
    """State changes inside may touch only branches (and tags) matching `patterns`
    (None or empty: no restriction)."""
    if not patterns:
        yield
        return
    token = _allowed.set(tuple(patterns))
    try:
        yield
    finally:
        _allowed.reset(token)


def check_branch(name: str, what: str = "change") -> None:
    """`BranchPermissionError` unless the current context may change `name`."""
    patterns = _allowed.get()
    if patterns is None or any(fnmatch.fnmatchcase(name, p) for p in patterns):
        return
    raise BranchPermissionError(
        f"this token may not {what} {name!r}: its branches rule allows only "
        f"{', '.join(repr(p) for p in patterns)}"
    )
