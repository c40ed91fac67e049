"""The per-key three-way rule: base b, source s, target t (a row, or None if absent).

Unchanged side -> take the other; both equal -> keep; insert vs different insert ->
divergent_insert; delete vs update -> delete_vs_update; update vs update -> merged cell by
cell against the base, and a property both sides set to different values is
divergent_update. Writing a value equal to the base is no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphlake.merge.conflicts import (
    DELETE_VS_UPDATE,
    DIVERGENT_INSERT,
    DIVERGENT_UPDATE,
    Conflict,
)

Row = dict[str, Any]
STRATEGIES = ("ours", "theirs")


@dataclass(frozen=True)
class Decision:
    """What happens to the target's row: keep it, put `row`, or delete it."""

    action: str  # "keep" | "put" | "delete"
    row: Row | None = None


KEEP = Decision("keep")


def merge_key(
    table: str,
    key: str,
    b: Row | None,
    s: Row | None,
    t: Row | None,
    strategy: str | None = None,
    uncertain_base: bool = False,
) -> tuple[Decision, Conflict | None]:
    """Decide one key. With `uncertain_base` (a virtual base that itself conflicted here)
    any disagreement between the sides is a conflict."""
    if s == t:
        return KEEP, None
    if not uncertain_base:
        if s == b:
            return KEEP, None
        if t == b:
            return _take(s, t), None
    if b is None or (uncertain_base and (s is None) == (t is None)):
        kind = DIVERGENT_INSERT if b is None else DIVERGENT_UPDATE
        props = _differing(s, t)
        conflict = _conflict(kind, table, key, b, s, t, props)
        return _resolve(conflict, s, t, strategy, merged=None)
    if s is None or t is None:
        side = "source" if s is None else "target"
        conflict = _conflict(
            DELETE_VS_UPDATE,
            table,
            key,
            b,
            s,
            t,
            (),
            f"{table} {key!r}: deleted on the {side}, updated on the other",
        )
        return _resolve(conflict, s, t, strategy, merged=None)
    merged, clashes = _merge_cells(b, s, t)
    if not clashes:
        return (KEEP if merged == t else Decision("put", merged)), None
    conflict = _conflict(DIVERGENT_UPDATE, table, key, b, s, t, tuple(clashes))
    return _resolve(conflict, s, t, strategy, merged=merged)


def _take(s: Row | None, t: Row | None) -> Decision:
    if s is None:
        return Decision("delete")
    return Decision("put", s)


def merge_cells(b: Row, s: Row, t: Row) -> tuple[Row, list[str]]:
    """Cell by cell against the base: the merged row and the properties that clash."""
    return _merge_cells(b, s, t)


def _merge_cells(b: Row, s: Row, t: Row) -> tuple[Row, list[str]]:
    merged: Row = {}
    clashes: list[str] = []
    for name in t:
        bv, sv, tv = b.get(name), s.get(name), t.get(name)
        if sv in (tv, bv):
            merged[name] = tv
        elif tv == bv:
            merged[name] = sv
        else:
            merged[name] = tv
            clashes.append(name)
    return merged, clashes


def _differing(s: Row | None, t: Row | None) -> tuple[str, ...]:
    if s is None or t is None:
        return ()
    return tuple(n for n in t if n != "id" and s.get(n) != t.get(n))


def _conflict(
    kind: str,
    table: str,
    key: str,
    b: Row | None,
    s: Row | None,
    t: Row | None,
    props: tuple[str, ...],
    message: str | None = None,
) -> Conflict:
    if message is None:
        what = {
            DIVERGENT_INSERT: "inserted with different values on both sides",
            DIVERGENT_UPDATE: "set to different values on both sides",
        }[kind]
        detail = f" ({', '.join(props)})" if props else ""
        message = f"{table} {key!r}: {what}{detail}"
    return Conflict(kind, table, key, message, props, b, s, t)


def _resolve(
    conflict: Conflict,
    s: Row | None,
    t: Row | None,
    strategy: str | None,
    merged: Row | None,
) -> tuple[Decision, Conflict]:
    """Apply `strategy` to a data conflict (or leave it unresolved)."""
    if strategy is None:
        return KEEP, conflict
    resolved = Conflict(**{**conflict.__dict__, "resolution": strategy})
    if strategy == "ours":
        if merged is not None:  # the target's values where they clash, merged cells elsewhere
            return (KEEP if merged == t else Decision("put", merged)), resolved
        return KEEP, resolved
    if merged is not None and s is not None and t is not None:
        row = {**merged, **{p: s[p] for p in conflict.properties}}
        return (KEEP if row == t else Decision("put", row)), resolved
    return _take(s, t), resolved
