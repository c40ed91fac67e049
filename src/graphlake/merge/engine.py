"""`Graph.merge` and `Graph.merge_many`: classify, validate, then publish exactly once.

Nothing is written before every table has been classified and the merged result
validated; then all table effects land on Lance branches the target owns (or adopt a
source's exact state), and one compare-and-swap of the target ref publishes the merge.
If the target moved meanwhile, the merge is classified again on the new head (bounded);
from its first lost race on, it holds a merge intent on the target, so writers of the
target wait for it (`graphlake.catalog.intents`) and the next attempt lands.

This is the top of the merge engine: each attempt is one `MergeRun` (merge.run) passed
down to the step (merge.step: schema merge, then rows), the fold across schemas
(merge.many_schema) and the publish (merge.effects); none of them imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graphlake import probes
from graphlake.catalog.commits import Commit
from graphlake.catalog.intents import MergeIntent, MergeIntents
from graphlake.errors import MergeConflictError, MergeError, ResolutionError
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase
from graphlake.merge.classify import Classification
from graphlake.merge.counts import fill_counts
from graphlake.merge.data_checks import merge_checks
from graphlake.merge.delta import DiscoverySettings
from graphlake.merge.effects import publish_classified, record_index_work, stage
from graphlake.merge.find_base import merge_base_of
from graphlake.merge.many_schema import fold
from graphlake.merge.resolutions import Resolution, Resolver, parse_resolutions
from graphlake.merge.rows import STRATEGIES
from graphlake.merge.run import Checks, MergeRun, check_meta
from graphlake.merge.shown import reported
from graphlake.merge.step import Pending, classify_step, own_bases, record_step, schemas_differ
from graphlake.merge.timing import PhaseTimer
from graphlake.retry import retry_while_head_moves

if TYPE_CHECKING:
    from graphlake.query.data_checks import Runner
    from graphlake.repo import Repo

# A merge attempt takes longer than a typical write, so against a branch that keeps
# moving it loses most races: it retries more often than writes do, and waits only
# briefly (a long sleep only lets more writes land before the next attempt).
MAX_ATTEMPTS = 16
MAX_WAIT_S = 0.25


def merge(
    repo: Repo,
    source: str,
    into: str,
    *,
    strategy: str | None = None,
    dry_run: bool = False,
    message: str | None = None,
    lineage: str | None = None,
    memory_budget: int | None = None,
    resolutions: Sequence[Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    checks: bool = False,
    check_runner: Runner | None = None,
) -> R.MergeResult:
    """`resolutions` settle single conflicts (merge.resolutions); `meta` adds entries
    to the merge commit's meta (a merge request records its id there; the names the
    merge records itself, `merge.run.RECORDED_META`, are refused). `checks`: run
    the merged result's data checks on the would-be merged state (`result.data_checks`;
    a real merge raises `DataCheckFailedError` when one fails and publishes nothing);
    `check_runner` runs each query (default: in this process)."""
    return _run(
        repo,
        [source],
        into,
        strategy=strategy,
        dry_run=dry_run,
        message=message,
        lineage=lineage,
        memory_budget=memory_budget,
        strict_disjoint=False,
        resolutions=resolutions,
        meta=meta,
        checks=Checks(check_runner) if checks else None,
    )


def merge_many(
    repo: Repo,
    sources: Sequence[str],
    into: str,
    *,
    strict_disjoint: bool = False,
    strategy: str | None = None,
    dry_run: bool = False,
    message: str | None = None,
    lineage: str | None = None,
    memory_budget: int | None = None,
    resolutions: Sequence[Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    checks: bool = False,
    check_runner: Runner | None = None,
) -> R.MergeResult:
    if isinstance(sources, str) or not sources:
        raise MergeError("merge_many takes a non-empty list of source branches")
    if len(set(sources)) != len(sources):
        raise MergeError("merge_many: a source branch is listed twice")
    return _run(
        repo,
        list(sources),
        into,
        strategy=strategy,
        dry_run=dry_run,
        message=message,
        lineage=lineage,
        memory_budget=memory_budget,
        strict_disjoint=strict_disjoint,
        resolutions=resolutions,
        meta=meta,
        checks=Checks(check_runner) if checks else None,
    )


def _run(
    repo: Repo,
    sources: list[str],
    into: str,
    *,
    strategy: str | None,
    dry_run: bool,
    message: str | None,
    lineage: str | None,
    memory_budget: int | None,
    strict_disjoint: bool,
    resolutions: Sequence[Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    checks: Checks | None = None,
) -> R.MergeResult:
    settings = DiscoverySettings.resolve(lineage, memory_budget)
    parsed = parse_resolutions(resolutions)
    check_meta(meta)
    extra = {**(meta or {})}
    if parsed:
        extra["resolutions"] = [r.to_dict() for r in parsed]
    repo.branch_ref(into)  # the target must be a branch; sources may be any revision
    if into in sources:
        raise MergeError(f"cannot merge branch {into!r} into itself")
    if strategy is not None and strategy not in STRATEGIES:
        raise MergeError(f"unknown strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})")
    options = MergeRun(
        repo,
        into,
        strategy=strategy,
        dry_run=dry_run,
        strict_disjoint=strict_disjoint,
        settings=settings,
        message=message,
        meta=extra,
        checks=checks,
    )

    # A dry run's scratch forks and merged schema leave nothing in the root.
    def run() -> R.MergeResult:
        with (
            repo.tables.dry_run_scope() if dry_run else nullcontext(),
            MergeIntent(MergeIntents(repo.store), into) as intent,
        ):
            return retry_while_head_moves(
                lambda: _merge_once(options, sources, parsed),
                branch=into,
                what="merge",
                attempts=MAX_ATTEMPTS,
                max_wait_s=MAX_WAIT_S,
                on_lost=intent.claim,
            )

    return reported(repo, into, sources, run)


def _merge_once(
    options: MergeRun, sources: list[str], parsed: tuple[Resolution, ...]
) -> R.MergeResult:
    """One attempt: read the target's head, then merge `sources` into it as `options`
    say (a fresh timer and resolver per attempt)."""
    repo, into, dry_run = options.repo, options.into, options.dry_run
    timer = PhaseTimer()
    label = sources[0] if len(sources) == 1 else ",".join(sources)
    with timer.phase("resolve_base"):
        t_ref, target = repo.branch_head(into)
        run = replace(
            options, t_ref=t_ref, timer=timer, resolver=Resolver(parsed) if parsed else None
        )
        heads = [repo.resolve(s) for s in sources]
        result = R.MergeResult(R.ALREADY_UP_TO_DATE, label, into, commit=target.id, dry_run=dry_run)
        # Sources the target already contains add nothing.
        pending = [
            (n, h)
            for n, h in zip(sources, heads, strict=True)
            if not repo.history.is_ancestor(h.id, target.id)
        ]
        pending = _drop_contained(repo, target, pending)
        fast_forward = len(pending) == 1 and repo.history.is_ancestor(target.id, pending[0][1].id)
        if pending and not fast_forward:
            base = merge_base_of(repo, [target, *(h for _, h in pending)])
            source_bases = own_bases(repo, target, pending)
            result.base = base.commit.id
            merged_checks = merge_checks(repo, base.commit, target, pending, run.strategy)
    resolver, checks = run.resolver, run.checks
    if resolver is not None and (not pending or fast_forward):
        resolver.check_all_used([])  # nothing conflicts: every resolution is a mistake
    if not pending:
        result.base = target.id
        return run.finish(result)
    if fast_forward:
        head = pending[0][1]
        result.outcome, result.base, result.commit = R.FAST_FORWARD, target.id, head.id
        if checks is not None:
            with timer.phase("data_checks"):
                checks.enforce(repo, head, result)
        if not dry_run:
            with timer.phase("publish"):
                repo.refs.cas(into, t_ref, head.id, action="merge (fast-forward)")
        return run.finish(result)
    if len(pending) > 1 and schemas_differ(base, target, pending):
        if resolver is not None:
            raise ResolutionError(
                "resolutions are not supported yet by a merge_many whose "
                "sources have different schemas"
            )
        result.resolved = list(merged_checks.resolved)
        if merged_checks.conflicts:
            if not dry_run:
                raise MergeConflictError(merged_checks.conflicts)
            result.outcome, result.conflicts = R.CONFLICT, merged_checks.conflicts
            return run.finish(result)
        return run.finish(fold(run, target, pending, base, result, merged_checks.checks_id))
    cls = classify_step(run, base, target, pending, source_bases, merged_checks)
    result.resolved = list(cls.resolved)
    if resolver is not None:
        # Schema conflicts left: the rows are not merged, so row resolutions wait.
        resolver.check_all_used(list(cls.conflicts), rows=cls.rows_merged)
    if not cls.rows_merged:  # schema conflicts: rows cannot merge yet
        if dry_run:
            result.outcome, result.conflicts = R.CONFLICT, list(cls.conflicts)
            return run.finish(result)
        raise MergeConflictError(list(cls.conflicts))
    record_step(result, cls)
    fill_counts(repo, base.commit, target, [h for _, h in pending], result.stats)
    if cls.conflicts:
        if dry_run:
            result.outcome, result.conflicts = R.CONFLICT, list(cls.conflicts)
            return run.finish(result)
        raise MergeConflictError(list(cls.conflicts))
    # Every pending source has commits the target lacks, so the merge is recorded even
    # when the sides converged (both made the same change, or a source's commits net to
    # nothing): as in git, the source's head enters the target's history, so a later
    # merge takes it as the base instead of replaying or re-deciding those changes.
    result.outcome = R.MERGED
    inspect = None
    if checks is not None:

        def inspect(commit: Commit) -> None:
            with timer.phase("data_checks"):
                checks.enforce(repo, commit, result)

    if dry_run:
        result.commit = None
        if inspect is not None and merged_checks.checks_id is None:
            result.data_checks = []  # no checks: nothing to stage
        elif inspect is not None:  # the merged state on scratch branches, then discarded
            with timer.phase("stage"):
                staged = stage(run, cls, merged_checks.checks_id)
            inspect(staged)
        return run.finish(result)
    with timer.phase("publish"), probes.collect() as counts:
        commit = _publish(run, cls, base, source_bases, pending, merged_checks.checks_id, inspect)
    result.commit = commit.id
    record_index_work(result, commit, counts)
    return run.finish(result)


def _drop_contained(
    repo: Repo, target: Commit, pending: list[tuple[str, Commit]]
) -> list[tuple[str, Commit]]:
    """Drop sources that another pending source already contains (same or ancestor).

    One walk per source, from its head down to the common base, instead of an ancestry
    query per pair: shards of one ingest are short branches off one base.
    """
    if len(pending) <= 1:
        return pending
    heads = [h.id for _, h in pending]
    stop = set(repo.history.merge_bases_many([target.id, *heads]))
    reached: set[str] = set()
    for head_id in dict.fromkeys(heads):
        reached |= repo.history.ancestors_since(head_id, stop)
    kept: list[tuple[str, Commit]] = []
    seen: set[str] = set()
    for name, head in pending:
        if head.id not in reached and head.id not in seen:
            kept.append((name, head))
            seen.add(head.id)
    return kept


def _publish(
    run: MergeRun,
    cls: Classification,
    base: MergeBase,
    source_bases: tuple[MergeBase, ...],
    pending: Pending,
    checks_id: str | None = None,
    inspect: Callable[[Commit], None] | None = None,
) -> Commit:
    op = "merge" if len(pending) == 1 else "merge_many"
    names = [n for n, _ in pending]
    return publish_classified(
        run,
        cls,
        op,
        parents=(cls.target.id, *(h.id for _, h in pending)),
        message=run.merge_message(names),
        meta=run.merge_meta(base.commit.id, names, [b.commit.id for b in source_bases]),
        checks_id=checks_id,
        inspect=inspect,
    )
