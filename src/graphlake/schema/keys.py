"""The key rule: how a key value given by a caller becomes the stored `id` text.

A node's key (its `@key` property) and an edge's `id` are stored as text in the `id`
column. A key may be given as a string, an integer or a date (its ISO text); a bool is
not a key (it is an `int` in Python, so it is refused by name). Writes, reads by key and
the ingest's up-front key check all use this one rule.
"""

from __future__ import annotations

import datetime as dt
from typing import Any


def key_string(v: Any) -> str:
    """The stored `id` text of key value `v`; `TypeError` if `v` cannot be a key."""
    if isinstance(v, bool):
        raise TypeError(f"{v!r} is not a key")
    if isinstance(v, str):
        return v
    if isinstance(v, int | dt.date):
        return v.isoformat() if isinstance(v, dt.date) else str(v)
    raise TypeError(f"{v!r} is not a key")
