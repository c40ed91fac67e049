"""The merge base: the lowest common ancestor of the two heads.

With several best common ancestors (criss-cross history) the base is virtual, as in
git's recursive strategy: the ancestors are merged with each other (recursively) into an
unreferenced commit. Keys on which that virtual merge itself conflicted are "uncertain":
there, any disagreement between the sides is reported, never decided by the base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit
from graphlake.errors import MergeError

if TYPE_CHECKING:
    from graphlake.repo import Repo

MAX_DEPTH = 8


@dataclass
class MergeBase:
    commit: Commit
    virtual: bool = False
    uncertain: dict[str, set[str]] = field(default_factory=dict)  # table -> keys


def merge_base_of(repo: Repo, heads: list[Commit]) -> MergeBase:
    """The merge base of two or more heads (one base common to all of them)."""
    if len(heads) == 2:
        return merge_base(repo, heads[0], heads[1])
    bases = repo.history.merge_bases_many([h.id for h in heads])
    if not bases:
        raise MergeError("the branches have no common ancestor")
    return _fold(repo, bases, depth=0)


def bases_per_source(repo: Repo, target: Commit, heads: list[Commit]) -> list[MergeBase]:
    """Each head's own merge base with `target`. Heads with the same best common
    ancestors share one MergeBase object (one virtual merge for a criss-cross), so
    callers can group sources by base."""
    memo: dict[tuple[str, ...], MergeBase] = {}
    out: list[MergeBase] = []
    for head in heads:
        ids = tuple(repo.history.merge_bases(target.id, head.id))
        if not ids:
            raise MergeError(f"commits {target.id[:12]} and {head.id[:12]} have no common ancestor")
        if ids not in memo:
            memo[ids] = _fold(repo, list(ids), depth=0)
        out.append(memo[ids])
    return out


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


def merge_base(repo: Repo, a: Commit, b: Commit, depth: int = 0) -> MergeBase:
    bases = repo.history.merge_bases(a.id, b.id)
    if not bases:
        raise MergeError(f"commits {a.id[:12]} and {b.id[:12]} have no common ancestor")
    return _fold(repo, bases, depth)


def _fold(repo: Repo, bases: list[str], depth: int) -> MergeBase:
    if len(bases) == 1:
        return MergeBase(repo.commits.get(bases[0]))
    if depth >= MAX_DEPTH:
        raise MergeError("merge history is too deeply criss-crossed to find a base")
    # merge.engine <-> merge.many_schema call each other: imported on use (a circle)
    from graphlake.merge.engine import virtual_merge

    commits = [repo.commits.get(c) for c in sorted(bases)]
    current = MergeBase(commits[0], virtual=True)
    for other in commits[1:]:
        nested = merge_base(repo, current.commit, other, depth + 1)
        commit, uncertain = virtual_merge(repo, nested, other, current.commit)
        for table, keys in (*current.uncertain.items(), *nested.uncertain.items()):
            uncertain.setdefault(table, set()).update(keys)
        current = MergeBase(commit, virtual=True, uncertain=uncertain)
    return current
