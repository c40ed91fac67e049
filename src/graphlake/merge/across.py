"""The per-key rule for sources merged against different bases (merge_many of sources
forked from, or synced with, different commits of the target).

Each group of sources sharing a base is first combined by the usual per-key rules; each
group's image then carries its own base row. A key only one group changed is decided by
the three-way rule against that group's base, exactly as merging that group alone would.
A key two groups changed is a conflict between sources unless their rows are equal (no
strategy resolves it: a strategy arbitrates with the target only); equal rows converge
and are decided against the newest of their bases, the one whose sources saw every change
the others' bases hold (merging the groups one by one in any order arrives there too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graphlake.merge.conflicts import (
    DELETE_VS_UPDATE,
    DIVERGENT_INSERT,
    DIVERGENT_UPDATE,
    Conflict,
    between_sources,
)
from graphlake.merge.rows import KEEP, Decision, Row, merge_key


@dataclass(frozen=True)
class Image:
    """One group's view of a key: its base row, its sources' combined row, the target's."""

    group: int
    b: Row | None
    s: Row | None
    t: Row | None
    uncertain: bool = False
    label: str = ""  # the group's sources that changed the key, for conflict reports


def touched_by(images: list[Image]) -> list[str]:
    return [im.label for im in images if im.label]


def decide(
    table: str,
    key: str,
    images: list[Image],
    strategy: str | None,
    newest: Callable[[list[int]], int | None],
) -> tuple[Decision, list[Conflict]]:
    """The key's decision, and its conflicts (resolved ones carry their resolution).
    `newest(groups)`: index into `groups` of the group with the newest base, or None."""
    first = images[0]
    if len(images) == 1:
        decision, conflict = merge_key(
            table, key, first.b, first.s, first.t, strategy, first.uncertain
        )
        return decision, [] if conflict is None else [conflict]
    between = [_between(table, key, first, other) for other in images[1:] if other.s != first.s]
    if between:
        return KEEP, between
    chosen = newest([im.group for im in images])
    if chosen is None:
        # Bases none of which contains the others (the target's history has merges):
        # there is no "latest knowledge" to decide by, so it must be unanimous.
        decisions = [merge_key(table, key, im.b, im.s, im.t) for im in images]
        if all(c is None and d == decisions[0][0] for d, c in decisions):
            return decisions[0][0], []
        return KEEP, [_unordered(table, key, first)]
    im = images[chosen]
    decision, conflict = merge_key(table, key, im.b, im.s, im.t, strategy, im.uncertain)
    return decision, [] if conflict is None else [conflict]


def _between(table: str, key: str, a: Image, b: Image) -> Conflict:
    """Two groups of sources, forked from different commits, left the key differently."""
    props: tuple[str, ...] = ()
    if a.s is None or b.s is None:
        kind = DELETE_VS_UPDATE
    else:
        kind = DIVERGENT_INSERT if a.b is None and b.b is None else DIVERGENT_UPDATE
        props = tuple(n for n in a.s if n != "id" and a.s.get(n) != b.s.get(n))
    detail = f" ({', '.join(props)})" if props else ""
    message = (
        f"{table} {key!r}: changed differently by sources forked from different "
        f"commits of the target{detail}"
    )
    conflict = Conflict(kind, table, key, message, props, a.b, b.s, a.s)
    return between_sources(conflict, b.label, a.label, a.t)


def _unordered(table: str, key: str, im: Image) -> Conflict:
    kind = DIVERGENT_INSERT if im.b is None else DIVERGENT_UPDATE
    message = (
        f"{table} {key!r}: sources forked from unrelated commits of the target "
        f"wrote the same row, and the target's row differs"
    )
    return Conflict(kind, table, key, message, (), im.b, im.s, im.t)
