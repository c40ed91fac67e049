"""The history's commit graph as SVG shapes, from the same lane layout as `log --graph`.

Row `r` holds commit `r`; a lane is a line from the column it leaves row `r` at to the
column it reaches on row `r + 1` (a straight line, or a curve where it changes column).
A merge's parents all leave its dot, so an N-way merge shows N+1 lines going down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphlake.catalog.commits import Commit
from graphlake.lanes import Lanes

ROW_H = 28  # must match `.row` height in style.css
LANE_W = 16
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    color: str
    merge: bool


@dataclass(frozen=True)
class Line:
    path: str
    color: str


@dataclass(frozen=True)
class Picture:
    width: int
    height: int
    dots: list[Dot]
    lines: list[Line]


def _x(col: int) -> float:
    return LANE_W / 2 + col * LANE_W


def _color(col: int) -> str:
    return PALETTE[col % len(PALETTE)]


def picture(commits: Sequence[Commit], first: int, count: int | None = None) -> Picture:
    """The drawing of `count` commits from `commits[first]` (children first). Commits
    before `first` only place the lanes (a page continues the lanes of the pages above
    it); the one after the page, if given, says where the lanes leaving the page go. A
    lane with nothing below it runs straight to the bottom edge."""
    lanes = Lanes()
    drawings = [lanes.draw(c.id, c.parents) for c in commits]
    rows = max(len(commits) - first, 0) if count is None else min(count, len(commits) - first)
    dots: list[Dot] = []
    lines: list[Line] = []
    widest = 1
    for r in range(max(first - 1, 0), first + rows):
        d = drawings[r]
        y = (r - first) * ROW_H + ROW_H / 2
        widest = max(widest, len(d.outgoing), len(d.incoming))
        if r >= first:
            dots.append(Dot(_x(d.column), y, _color(d.column), len(commits[r].parents) > 1))
        ends = drawings[r + 1].incoming if r + 1 < len(drawings) else None
        for lane, start in enumerate(d.outgoing):
            end = ends[lane] if ends is not None else start
            lines.append(Line(_segment(start, end, y), _color(max(start, end))))
    return Picture(widest * LANE_W, max(rows, 0) * ROW_H, dots, lines)


def _segment(start: int, end: int, y: float) -> str:
    x0, x1, y1 = _x(start), _x(end), y + ROW_H
    if start == end:
        return f"M{x0:g},{y:g} L{x1:g},{y1:g}"
    mid = y + ROW_H / 2
    return f"M{x0:g},{y:g} C{x0:g},{mid:g} {x1:g},{mid:g} {x1:g},{y1:g}"
