"""What the pages show of one row conflict: its sides as columns, and its properties
split into the conflicting ones (shown) and the rest (folded).

A conflict is a `Conflict` (a merge result) or its `to_dict()` (a merge request's
preview). A two-way conflict has three sides: base, source, target. A merge_many
conflict names its sides and carries each side's row under that name in `rows`; its
columns are base, each named side, and the target unless a side is the target.
"""

from __future__ import annotations

from typing import Any

_HIDDEN = ("id",)


def field(conflict: Any, name: str) -> Any:
    if isinstance(conflict, dict):
        return conflict.get(name)
    return getattr(conflict, name, None)


def sides(conflict: Any, source: str, into: str) -> list[tuple[str, dict[str, Any] | None]]:
    """(label, row or None) per column, base first."""
    out: list[tuple[str, dict[str, Any] | None]] = [("base", field(conflict, "base"))]
    rows = field(conflict, "rows")
    if rows:
        out += [(str(name), row) for name, row in rows.items()]
        if into not in rows:
            out.append((f"target ({into})", field(conflict, "target")))
        return out
    out.append((f"source ({source})", field(conflict, "source")))
    out.append((f"target ({into})", field(conflict, "target")))
    return out


def properties(conflict: Any, source: str, into: str) -> tuple[list[str], list[str]]:
    """(conflicting properties, the others): the conflict's own `properties`, or where
    it names none (an insert or delete against an update) those whose values differ
    between the sides; the others in the order the rows hold them."""
    rows = [row for _, row in sides(conflict, source, into)]
    names = list(dict.fromkeys(p for row in rows if row for p in row if p not in _HIDDEN))
    hot = [p for p in field(conflict, "properties") or () if p not in _HIDDEN]
    if not hot:
        present = [row for row in rows if row is not None]
        hot = [p for p in names if len({repr(row.get(p)) for row in present}) > 1]
    return hot, [p for p in names if p not in hot]
