""" "Did you mean ...?": the one home for suggesting a known name for a misspelt one.

Used by the schema parser (types, annotations, properties), the Cypher checker and parser
(labels, properties, functions, keywords) and revision lookup (branch and tag names), so
every error suggests the same way: difflib's ratio at 0.6, then a case-insensitive
match (difflib is case-sensitive: `string` finds `String`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest", "did_you_mean", "nearest"]

CUTOFF = 0.6


def nearest(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` known names close to `name`, closest first."""
    known = list(known)
    close = difflib.get_close_matches(name, known, n=n, cutoff=CUTOFF)
    if not close:
        close = [k for k in known if k.lower() == name.lower()][:n]
    return close


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` is most likely a misspelling of (None: none is close)."""
    found = nearest(name, known, n=1)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'X'?)`, or "" when nothing is close."""
    close = closest(name, known)
    return f" (did you mean '{close}'?)" if close is not None else ""
