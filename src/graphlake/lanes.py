"""The commit graph as text lanes, as `git log --graph` draws it.

Each lane is a column waiting for one commit (two cells wide: `|` and the gap where `/`
and `\\` run). Commits must come children first (as `log` lists them). For each commit
`Lanes.draw` returns the lines to print: lanes that waited for the same commit join
(`|/`), the commit's own line (`*`), then its lane forks once per extra parent (`|\\`),
so an N-way merge opens N-1 lanes. Lines that move a lane shift it one column at a time.

The CLI's `log --graph` prints the lines; the web UI draws the same layout as SVG from
each drawing's `column`, `incoming` and `outgoing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Drawing:
    """What to print for one commit: `before` lines, then the commit's line after
    `prefix`, its details after `under`, then the `after` lines. All padded to `width`."""

    before: list[str]
    prefix: str
    under: str
    after: list[str]
    # The same layout as numbers: the commit's column; for each lane waiting before this
    # commit (in order), the column it reaches on the commit's row; for each lane waiting
    # after it, the column it leaves the commit's row from (a parent's lane leaves the dot).
    column: int = 0
    incoming: list[int] = field(default_factory=list)
    outgoing: list[int] = field(default_factory=list)


@dataclass
class Lanes:
    lanes: list[str] = field(default_factory=list)  # the commit each lane waits for

    def draw(self, commit_id: str, parents: Sequence[str]) -> Drawing:
        """The lines of the next commit (children come before parents)."""
        if commit_id not in self.lanes:
            self.lanes.append(commit_id)  # a new tip (or a parent listed before its child)
        col = self.lanes.index(commit_id)
        incoming = self._join_ends(commit_id, col)
        before = self._join(commit_id, col)
        width = 2 * len(self.lanes)
        prefix = _cells({2 * i: "*" if i == col else "|" for i in range(len(self.lanes))})
        # Under the commit its own lane goes on only if it has a parent to go on to.
        under = _cells({2 * i: "|" for i in range(len(self.lanes)) if i != col or parents})
        unique_parents = list(dict.fromkeys(parents))
        outgoing = _fork_starts(col, len(unique_parents), len(self.lanes))
        after = self._fork(col, unique_parents)
        return Drawing(
            before,
            prefix.ljust(width),
            under.ljust(width),
            after,
            column=col,
            incoming=incoming,
            outgoing=outgoing,
        )

    def _join_ends(self, commit_id: str, col: int) -> list[int]:
        kept = [i for i, c in enumerate(self.lanes) if c != commit_id or i == col]
        return [kept.index(i) if i in kept else col for i in range(len(self.lanes))]

    def _join(self, commit_id: str, col: int) -> list[str]:
        """Other lanes waiting for `commit_id` run into `col`; lanes right of them close up."""
        ends = self._join_ends(commit_id, col)
        self.lanes = [c for i, c in enumerate(self.lanes) if c != commit_id or i == col]
        return _moves(list(range(len(ends))), ends)

    def _fork(self, col: int, parents: list[str]) -> list[str]:
        """The commit's lane continues to its first parent; each other parent gets a new
        lane to its right (a root's lane ends, and lanes right of it close up)."""
        starts = _fork_starts(col, len(parents), len(self.lanes))
        ends = list(range(len(starts)))
        self.lanes = self.lanes[:col] + parents + self.lanes[col + 1 :]
        return _moves(starts, ends)


def _fork_starts(col: int, parents: int, width: int) -> list[int]:
    """Where each lane after a fork leaves the commit's row: parents' lanes at `col`."""
    return list(range(col)) + [col] * parents + list(range(col + 1, width))


def _moves(starts: list[int], ends: list[int]) -> list[str]:
    """Lines that carry each lane from column `starts[i]` to `ends[i]`, one step a line."""
    pos, lines = list(starts), []
    while pos != ends:
        cells: dict[int, str] = {}
        for i, (p, e) in enumerate(zip(pos, ends, strict=True)):
            if e > p:
                cells[2 * p + 1] = "\\"
                pos[i] = p + 1
            elif e < p:
                cells[2 * p - 1] = "/"
                pos[i] = p - 1
            else:
                cells.setdefault(2 * p, "|")
        lines.append(_cells(cells))
    return lines


def _cells(cells: dict[int, str]) -> str:
    width = max(cells, default=-1) + 1
    return "".join(cells.get(i, " ") for i in range(width))
