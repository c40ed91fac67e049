"""Find the merge base of two or more heads (`merge_base_of`, `bases_per_source`).

The base is the lowest common ancestor of the heads. With several best common ancestors
(criss-cross history) the base is virtual, as in git's recursive strategy: the ancestors
are merged with each other (recursively) into an unreferenced commit, by the merge
engine's own classification (`merge.classify`) and table effects (`merge.effects`), so
this module sits above both. Keys on which that virtual merge itself conflicted are
"uncertain" (`MergeBase.uncertain`): there, any disagreement between the sides is
reported, never decided by the base.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ulid import ULID

from graphlake.catalog.commits import Commit
from graphlake.errors import MergeError
from graphlake.merge.base import MergeBase
from graphlake.merge.classify import MergeInputs, classify
from graphlake.merge.effects import apply_tables
from graphlake.merge.run import MergeRun

if TYPE_CHECKING:
    from graphlake.repo import Repo

MAX_DEPTH = 8


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
    commits = [repo.commits.get(c) for c in sorted(bases)]
    current = MergeBase(commits[0], virtual=True)
    for other in commits[1:]:
        nested = merge_base(repo, current.commit, other, depth + 1)
        commit, uncertain = virtual_merge(repo, nested, other, current.commit)
        for table, keys in (*current.uncertain.items(), *nested.uncertain.items()):
            uncertain.setdefault(table, set()).update(keys)
        current = MergeBase(commit, virtual=True, uncertain=uncertain)
    return current


def virtual_merge(
    repo: Repo, base: MergeBase, source: Commit, target: Commit
) -> tuple[Commit, dict[str, set[str]]]:
    """Materialise the merge of two commits as an unreferenced commit (a virtual base).

    Data conflicts resolve to the target's side and are returned as uncertain keys.
    """
    cls = classify(MergeRun(repo, strategy="ours"), MergeInputs(base, (source,), target))
    uncertain: dict[str, set[str]] = {}
    for c in (*cls.resolved, *cls.conflicts):
        uncertain.setdefault(c.table, set()).add(c.entity_id)
    states = apply_tables(repo, cls, owner=f"virtual-{ULID()}", still_current=lambda: True)
    commit = Commit.create(
        parents=(target.id, source.id),
        message="virtual merge base",
        schema_id=target.schema_id,
        tables={**target.tables, **states},
        meta={"virtual": True},
        checks_id=target.checks_id,
    )
    repo.commits.put(commit)
    return commit, uncertain
