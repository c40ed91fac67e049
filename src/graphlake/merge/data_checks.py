"""Three-way merge of data checks by name (query/data_checks.py defines them).

For each name, a side changed the check if its definition (language and query; absent
when removed) differs from the base's. One changed value among all sides wins (both
sides making the same change agree); two different ones are a `data_check_conflict`,
which `strategy` resolves like a schema conflict: "ours" keeps the target's definition,
"theirs" takes the source's (in a merge_many, only when the sources that changed it
agree). The merged set is stored (in memory only in a dry run: storage/data_checks.py)
and named by the merge commit's `checks_id`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from graphlake.conflicts import DATA_CHECK_CONFLICT, DATA_CHECKS_TABLE, Conflict

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo

__all__ = ["MergedChecks", "merge_checks"]

Spec = Mapping[str, str] | None


@dataclass
class MergedChecks:
    checks: dict[str, dict[str, str]]
    checks_id: str | None
    conflicts: list[Conflict] = field(default_factory=list)
    resolved: list[Conflict] = field(default_factory=list)


def merge_checks(
    repo: Repo,
    base: Commit,
    target: Commit,
    sources: Sequence[tuple[str, Commit]],
    strategy: str | None,
) -> MergedChecks:
    """The data checks of merging `sources` into `target` from `base`."""
    ids = {base.checks_id, target.checks_id, *(h.checks_id for _, h in sources)}
    if len(ids) == 1 or all(h.checks_id == base.checks_id for _, h in sources):
        return MergedChecks(repo.data_checks.of(target), target.checks_id)
    b = repo.data_checks.of(base)
    t = repo.data_checks.of(target)
    srcs = [(name, repo.data_checks.of(h)) for name, h in sources]
    out: dict[str, dict[str, str]] = {}
    merged = MergedChecks(out, None)
    names = sorted({*b, *t, *(n for _, s in srcs for n in s)})
    for name in names:
        before = b.get(name)
        mine = t.get(name)
        theirs = {src: s.get(name) for src, s in srcs if s.get(name) != before}
        values = {_key(v) for v in theirs.values()}
        if mine != before:
            values.add(_key(mine))
        if len(values) <= 1:
            chosen: Spec = (
                mine if mine != before else next(iter(theirs.values())) if theirs else before
            )
        else:
            conflict = _conflict(name, before, mine, theirs)
            chosen, how = _by_strategy(strategy, mine, theirs)
            if how is None:
                merged.conflicts.append(conflict)
                chosen = mine
            else:
                merged.resolved.append(replace(conflict, resolution=how))
        if chosen is not None:
            out[name] = dict(chosen)
    if out == t:
        merged.checks_id = target.checks_id
    else:
        merged.checks_id = repo.data_checks.put(out)
    return merged


def _key(spec: Spec) -> tuple[str, str] | None:
    return None if spec is None else (spec["language"], spec["query"])


def _by_strategy(
    strategy: str | None, mine: Spec, theirs: Mapping[str, Spec]
) -> tuple[Spec, str | None]:
    if strategy == "ours":
        return mine, "ours"
    if strategy == "theirs" and len({_key(v) for v in theirs.values()}) == 1:
        return next(iter(theirs.values())), "theirs"
    return None, None


def _conflict(name: str, before: Spec, mine: Spec, theirs: Mapping[str, Spec]) -> Conflict:
    def shown(spec: Spec) -> dict[str, str] | None:
        return None if spec is None else dict(spec)

    first = next(iter(theirs.values()))
    if len(theirs) == 1:
        message = f"data check {name!r} was changed differently on both sides"
        rows = None
        sides = None
    else:
        message = f"data check {name!r} was changed differently by {', '.join(theirs)}"
        rows = {src: shown(v) for src, v in theirs.items()}
        sides = None
    return Conflict(
        kind=DATA_CHECK_CONFLICT,
        table=DATA_CHECKS_TABLE,
        entity_id=name,
        message=message,
        properties=("query",),
        base=shown(before),
        source=shown(first),
        target=shown(mine),
        sides=sides,
        rows=rows,
    )
