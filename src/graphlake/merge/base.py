"""The merge base as a value (`MergeBase`) and the order of several bases (`BaseOrder`).

The base is the lowest common ancestor of the heads (`merge.find_base` finds it). With
several best common ancestors (criss-cross history) the base is virtual, as in git's
recursive strategy: the ancestors are merged with each other (recursively) into an
unreferenced commit. Keys on which that virtual merge itself conflicted are "uncertain":
there, any disagreement between the sides is reported, never decided by the base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit

if TYPE_CHECKING:
    from graphlake.repo import Repo


@dataclass
class MergeBase:
    commit: Commit
    virtual: bool = False
    uncertain: dict[str, set[str]] = field(default_factory=dict)  # table -> keys


class BaseOrder:
    """Which of several merge bases is the newest: the one every other is an ancestor of.

    A source forked from that base saw every change the others' bases hold, so where
    sources with different bases converge on one row, its three-way decision is the one
    that merging the sources one by one arrives at.
    """

    def __init__(self, repo: Repo) -> None:
        self._repo = repo
        self._memo: dict[tuple[str, ...], str | None] = {}

    def newest(self, bases: list[MergeBase]) -> int | None:
        """Index in `bases` of the newest base, or None if no base descends from all."""
        ids = tuple(dict.fromkeys(b.commit.id for b in bases))
        if ids not in self._memo:
            self._memo[ids] = next(
                (
                    c
                    for c in ids
                    if all(o == c or self._repo.history.is_ancestor(o, c) for o in ids)
                ),
                None,
            )
        found = self._memo[ids]
        return (
            None if found is None else next(i for i, b in enumerate(bases) if b.commit.id == found)
        )
