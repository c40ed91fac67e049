"""Revert and cherry-pick: merge-engine applications, a three-way merge with a chosen base.

- `revert(rev)` on branch B: base `rev`, source `rev`'s parent, target B's head. What `rev`
  changed against its parent is undone; later changes to other rows and properties stay;
  a row changed since `rev` on B is a conflict of the usual kinds.
- `cherry_pick(rev)` into B: base `rev`'s parent, source `rev`, target B's head. What
  `rev` changed against its parent is applied; the commit records
  `meta.cherry_picked_from`.

For a merge commit, "its parent" is parent number `mainline` (1-based; default 1).
Everything else is the merge engine's: routes, conflicts, `strategy`, dry runs, the
schema merge, the merge intent, the retry while the branch moves and the one CAS that
publishes. The published commit has ONE parent (B's head): like git's, a revert or pick
is a new change on B, not a merge, so a later merge of the picked branch still sees its
own history. Applying changes that B's head already has (a pick of a commit B contains,
or one whose changes B has already) changes nothing and returns `already_up_to_date`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit
from graphlake.catalog.intents import MergeIntent, MergeIntents
from graphlake.errors import ApplyCommitError, MergeConflictError, MergeError
from graphlake.merge import engine
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase
from graphlake.merge.classify import Classification
from graphlake.merge.conflicts import SCHEMA_CONFLICT, Conflict
from graphlake.merge.delta import DiscoverySettings
from graphlake.merge.effects import publish_classified
from graphlake.merge.rows import STRATEGIES
from graphlake.merge.run import MergeRun
from graphlake.merge.shown import reported
from graphlake.merge.step import classify_step, record_step
from graphlake.merge.timing import PhaseTimer
from graphlake.retry import retry_while_head_moves

if TYPE_CHECKING:
    from graphlake.repo import Repo

REVERT, CHERRY_PICK = "revert", "cherry_pick"
REVERTED_META, PICKED_META = "reverted", "cherry_picked_from"


def revert(repo: Repo, rev: str, branch: str, **options: object) -> R.MergeResult:
    """Undo what `rev` changed against its parent (`mainline`) as one commit on `branch`."""
    return _apply(repo, REVERT, rev, branch, **options)  # type: ignore[arg-type]


def cherry_pick(repo: Repo, rev: str, into: str, **options: object) -> R.MergeResult:
    """Apply what `rev` changed against its parent (`mainline`) as one commit on `into`."""
    return _apply(repo, CHERRY_PICK, rev, into, **options)  # type: ignore[arg-type]


def parent_of(repo: Repo, commit: Commit, mainline: int | None) -> Commit:
    """The parent `commit`'s changes are taken against (`ApplyCommitError` if none)."""
    if not commit.parents:
        raise ApplyCommitError(
            f"commit {commit.id[:12]} is a root commit: it has no parent "
            "to take its changes against"
        )
    if mainline is None:
        return repo.commits.get(commit.parents[0])
    if isinstance(mainline, bool) or not isinstance(mainline, int):
        raise ApplyCommitError(f"mainline must be a parent number, not {mainline!r}")
    if len(commit.parents) == 1:
        raise ApplyCommitError(
            f"commit {commit.id[:12]} is not a merge: mainline applies only to merge commits"
        )
    if not 1 <= mainline <= len(commit.parents):
        raise ApplyCommitError(
            f"mainline {mainline} is out of range: commit "
            f"{commit.id[:12]} has parents 1..{len(commit.parents)}"
        )
    return repo.commits.get(commit.parents[mainline - 1])


def _apply(
    repo: Repo,
    kind: str,
    rev: str,
    branch: str,
    *,
    mainline: int | None = None,
    strategy: str | None = None,
    dry_run: bool = False,
    message: str | None = None,
    lineage: str | None = None,
    memory_budget: int | None = None,
) -> R.MergeResult:
    settings = DiscoverySettings.resolve(lineage, memory_budget)
    repo.branch_ref(branch)  # the target must be a branch
    if strategy is not None and strategy not in STRATEGIES:
        raise MergeError(f"unknown strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})")
    commit = repo.resolve(rev)
    parent = parent_of(repo, commit, mainline)
    base, source = (commit, parent) if kind == REVERT else (parent, commit)
    options = MergeRun(
        repo, branch, strategy=strategy, dry_run=dry_run, settings=settings, message=message
    )

    def run() -> R.MergeResult:
        # A dry run's scratch forks and merged schema leave nothing in the root.
        with (
            repo.tables.dry_run_scope() if dry_run else nullcontext(),
            MergeIntent(MergeIntents(repo.store), branch) as intent,
        ):
            return retry_while_head_moves(
                lambda: _apply_once(options, kind, rev, commit, base, source, mainline),
                branch=branch,
                what=kind.replace("_", "-"),
                attempts=engine.MAX_ATTEMPTS,
                max_wait_s=engine.MAX_WAIT_S,
                on_lost=intent.claim,
            )

    return reported(repo, branch, [commit.id, parent.id], run)


def _apply_once(
    options: MergeRun,
    kind: str,
    rev: str,
    commit: Commit,
    base: Commit,
    source: Commit,
    mainline: int | None,
) -> R.MergeResult:
    repo, branch = options.repo, options.into
    timer = PhaseTimer()
    with timer.phase("resolve_base"):
        t_ref, target = repo.branch_head(branch)
    run = replace(options, t_ref=t_ref, timer=timer)
    result = R.MergeResult(
        R.ALREADY_UP_TO_DATE, rev, branch, commit=target.id, base=base.id, dry_run=run.dry_run
    )
    if kind == CHERRY_PICK and repo.history.is_ancestor(commit.id, target.id):
        return run.finish(result)
    cls = classify_step(run, MergeBase(base), target, [(rev, source)])
    result.resolved = list(cls.resolved)
    if not cls.rows_merged:  # schema conflicts
        return _conflicts(run, result, cls.conflicts)
    record_step(result, cls)
    conflicts = list(cls.conflicts)
    if run.strategy is None:
        conflicts += _dropped_value_conflicts(result, kind, branch)
    if conflicts:
        return _conflicts(run, result, conflicts)
    if _changes_nothing(cls, target):
        return run.finish(result)
    result.outcome = R.MERGED
    if run.dry_run:
        result.commit = None
        return run.finish(result)
    verb = "revert" if kind == REVERT else "cherry-pick"
    meta: dict[str, object] = {
        REVERTED_META if kind == REVERT else PICKED_META: commit.id,
        "merge_base": base.id,
    }
    if mainline is not None:
        meta["mainline"] = mainline
    with timer.phase("publish"):
        published = publish_classified(
            run,
            cls,
            "merge",
            parents=(target.id,),
            message=run.message or f'{verb} {commit.id[:12]} "{_first_line(commit.message)}"',
            meta=meta,
            action=verb,
            record_effects=True,
        )
    result.commit = published.id
    return run.finish(result)


def _conflicts(
    run: MergeRun, result: R.MergeResult, conflicts: Sequence[Conflict]
) -> R.MergeResult:
    if not run.dry_run:
        raise MergeConflictError(list(conflicts))
    result.outcome, result.conflicts = R.CONFLICT, list(conflicts)
    return run.finish(result)


def _dropped_value_conflicts(result: R.MergeResult, kind: str, branch: str) -> list[Conflict]:
    """A merge keeps a dropped property's drop and lists the values it loses; undoing
    or applying a schema change must not lose values written since without being told
    to (`strategy`): each such value is a schema conflict."""
    verb = "reverting" if kind == REVERT else "cherry-picking"
    out = []
    for table, stats in result.stats.items():
        for prop, dropped in stats.dropped_values.items():
            for key, value in dict(dropped.get("values", {})).items():
                out.append(
                    Conflict(
                        SCHEMA_CONFLICT,
                        table,
                        str(key),
                        f"{table} {key!r}: {verb} drops property {prop!r}, which has a value "
                        f"written since on {branch!r} (pass a strategy to drop it anyway)",
                        properties=(prop,),
                        target={prop: value},
                    )
                )
    return out


def _changes_nothing(cls: Classification, target: Commit) -> bool:
    """Whether applying `cls` would leave the target as it is (no row, schema or table
    state changes): then there is nothing to publish."""
    if cls.target.schema_id != target.schema_id:
        return False
    if any(target.tables.get(n) != st for n, st in cls.fixed.items()):
        return False
    for name, outcome in cls.tables.items():
        plan = outcome.copy_plan if outcome.copy_plan is not None else outcome.plan
        adopts = outcome.adopt is not None and outcome.adopt != target.tables.get(name)
        if (
            adopts
            or outcome.adoptions
            or outcome.columns
            or (plan is not None and not plan.is_empty)
            or (outcome.plan is not None and not outcome.plan.is_empty)
        ):
            return False
    return True


def _first_line(text: str) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= 60 else line[:57] + "..."
