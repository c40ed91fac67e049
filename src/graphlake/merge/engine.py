"""`Graph.merge` and `Graph.merge_many`: classify, validate, then publish exactly once.

Nothing is written before every table has been classified and the merged result
validated; then all table effects land on Lance branches the target owns (or adopt a
source's exact state), and one compare-and-swap of the target ref publishes the merge.
If the target moved meanwhile, the merge is classified again on the new head (bounded);
from its first lost race on, it holds a merge intent on the target, so writers of the
target wait for it (`graphlake.catalog.intents`) and the next attempt lands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ulid import ULID

from graphlake import probes
from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.intents import MergeIntent, MergeIntents
from graphlake.errors import DataCheckFailedError, MergeConflictError, MergeError, ResolutionError
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase, bases_per_source, merge_base_of
from graphlake.merge.classify import Classification, MergeInputs, classify
from graphlake.merge.counts import fill_counts
from graphlake.merge.data_checks import MergedChecks, merge_checks
from graphlake.merge.delta import DiscoverySettings
from graphlake.merge.resolutions import Resolver, parse_resolutions
from graphlake.merge.rows import STRATEGIES
from graphlake.merge.schema_merge import Prepared, prepare
from graphlake.merge.shown import reported
from graphlake.merge.timing import PhaseTimer
from graphlake.recovery.publication import Publication
from graphlake.retry import HeadMoved, retry_while_head_moves
from graphlake.storage.adopt import Adoption, adopt
from graphlake.storage.scratch import scratch
from graphlake.storage.search_indexes import FTS_PROBE, VECTOR_PROBE
from graphlake.storage.tables import LanceCasError, index_columns
from graphlake.write import backfill
from graphlake.write.backfill import ColumnWrite
from graphlake.write.publish import apply_plan

if TYPE_CHECKING:
    from graphlake.catalog.refs import RefEntry
    from graphlake.query.data_checks import CheckResult, Runner
    from graphlake.repo import Repo

# A merge attempt takes longer than a typical write, so against a branch that keeps
# moving it loses most races: it retries more often than writes do, and waits only
# briefly (a long sleep only lets more writes land before the next attempt).
MAX_ATTEMPTS = 16
MAX_WAIT_S = 0.25
KEEP = object()  # publish_classified: the commit keeps the target's data checks


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
    to the merge commit's meta (a merge request records its id there). `checks`: run
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


@dataclass(frozen=True)
class Checks:
    """Run the merged result's data checks (query/data_checks.py) with `runner`."""

    runner: Runner | None = None

    def run(self, repo: Repo, commit: Commit) -> list[CheckResult]:
        # on first use only: loads lance, duckdb, lark (start-up time)
        from graphlake.query.data_checks import run_checks

        # only when data checks run: read.snapshot opens Lance tables
        from graphlake.read.snapshot import Snapshot

        return run_checks(Snapshot(repo, commit), repo.data_checks.of(commit), self.runner)

    def enforce(self, repo: Repo, commit: Commit, result: R.MergeResult) -> None:
        """Record the checks' results on `commit` in `result`; raise if one failed
        (a real merge: nothing is published)."""
        result.data_checks = self.run(repo, commit)
        if not result.dry_run and not result.checks_passed:
            raise DataCheckFailedError(result.data_checks)


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
    extra = {**(meta or {})}
    if parsed:
        extra["resolutions"] = [r.to_dict() for r in parsed]
    repo.branch_ref(into)  # the target must be a branch; sources may be any revision
    if into in sources:
        raise MergeError(f"cannot merge branch {into!r} into itself")
    if strategy is not None and strategy not in STRATEGIES:
        raise MergeError(f"unknown strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})")

    # A dry run's scratch forks and merged schema leave nothing in the root.
    def run() -> R.MergeResult:
        with (
            scratch(repo.tables) if dry_run else nullcontext(),
            MergeIntent(MergeIntents(repo.store), into) as intent,
        ):
            return retry_while_head_moves(
                lambda: _merge_once(
                    repo,
                    sources,
                    into,
                    strategy,
                    dry_run,
                    message,
                    settings,
                    strict_disjoint,
                    Resolver(parsed) if parsed else None,
                    extra,
                    checks,
                ),
                branch=into,
                what="merge",
                attempts=MAX_ATTEMPTS,
                max_wait_s=MAX_WAIT_S,
                on_lost=intent.claim,
            )

    return reported(repo, into, sources, run)


def _merge_once(
    repo: Repo,
    sources: list[str],
    into: str,
    strategy: str | None,
    dry_run: bool,
    message: str | None,
    settings: DiscoverySettings,
    strict_disjoint: bool,
    resolver: Resolver | None = None,
    extra: Mapping[str, Any] | None = None,
    checks: Checks | None = None,
) -> R.MergeResult:
    timer = PhaseTimer()
    label = sources[0] if len(sources) == 1 else ",".join(sources)
    with timer.phase("resolve_base"):
        t_ref, target = repo.branch_head(into)
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
            merged_checks = merge_checks(repo, base.commit, target, pending, strategy)
    if resolver is not None and (not pending or fast_forward):
        resolver.check_all_used([])  # nothing conflicts: every resolution is a mistake
    if not pending:
        result.base = target.id
        return finish(result, timer)
    if fast_forward:
        head = pending[0][1]
        result.outcome, result.base, result.commit = R.FAST_FORWARD, target.id, head.id
        if checks is not None:
            with timer.phase("data_checks"):
                checks.enforce(repo, head, result)
        if not dry_run:
            with timer.phase("publish"):
                repo.refs.cas(into, t_ref, head.id, action="merge (fast-forward)")
        return finish(result, timer)
    if len(pending) > 1 and schemas_differ(base, target, pending):
        # merge.engine <-> merge.many_schema call each other: imported on use (a circle)
        from graphlake.merge.many_schema import fold

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
            return finish(result, timer)
        return finish(
            fold(
                repo,
                into,
                t_ref,
                target,
                pending,
                base,
                strategy,
                dry_run,
                message,
                settings,
                strict_disjoint,
                timer,
                result,
                merged_checks.checks_id,
                (lambda commit: checks.enforce(repo, commit, result)) if checks else None,
            ),
            timer,
        )
    step = classify_step(
        repo,
        base,
        target,
        pending,
        source_bases,
        into,
        strategy,
        dry_run,
        t_ref.incarnation,
        strict_disjoint,
        settings,
        timer,
        resolver,
    )
    _add_check_conflicts(step, merged_checks)
    if step.prep is not None:
        result.resolved = list(step.prep.resolved)
    if resolver is not None:
        # Schema conflicts left: the rows are not merged, so row resolutions wait.
        resolver.check_all_used(
            step.cls.conflicts if step.cls else step.prep.conflicts if step.prep else [],
            rows=step.cls is not None,
        )
    if step.cls is None or step.inputs is None:  # schema conflicts: rows cannot merge yet
        assert step.prep is not None
        if dry_run:
            result.outcome, result.conflicts = R.CONFLICT, step.prep.conflicts
            return finish(result, timer)
        raise MergeConflictError(step.prep.conflicts)
    sides = (target, [h for _, h in pending])  # as committed, before any schema merge
    cls, inputs, target, pending = step.cls, step.inputs, step.target, step.pending
    record_step(result, cls, step.prep)
    fill_counts(repo, base.commit, sides[0], sides[1], result.stats)
    if cls.conflicts:
        if dry_run:
            result.outcome, result.conflicts = R.CONFLICT, cls.conflicts
            return finish(result, timer)
        raise MergeConflictError(cls.conflicts)
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
                staged = stage(repo, target, cls, merged_checks.checks_id)
            inspect(staged)
        return finish(result, timer)
    with timer.phase("publish"), probes.collect() as counts:
        commit = _publish(
            repo,
            into,
            t_ref,
            target,
            cls,
            pending,
            inputs,
            message,
            extra,
            merged_checks.checks_id,
            inspect,
        )
    result.commit = commit.id
    record_index_work(result, commit, counts)
    return finish(result, timer)


@dataclass
class MergeStep:
    """One classification: of the target and `pending` (after a schema merge, the views
    in the merged layout); `cls` is None while schema conflicts remain (`prep` has them)."""

    cls: Classification | None
    inputs: MergeInputs | None
    target: Commit
    pending: list[tuple[str, Commit]]
    prep: Prepared | None


def classify_step(
    repo: Repo,
    base: MergeBase,
    target: Commit,
    pending: list[tuple[str, Commit]],
    source_bases: tuple[MergeBase, ...],
    into: str,
    strategy: str | None,
    dry_run: bool,
    owner: str,
    strict_disjoint: bool,
    settings: DiscoverySettings,
    timer: PhaseTimer,
    resolver: Resolver | None = None,
) -> MergeStep:
    """Merge the schemas if they differ (one source at most), then classify the rows."""
    prep = None
    if schemas_differ(base, target, pending):
        assert len(pending) == 1, "merge_many folds sources of another schema one by one"
        with timer.phase("schema"):
            prep = _merge_schemas(repo, base, target, pending, strategy, dry_run, owner, resolver)
        if prep.schema_id is None:
            return MergeStep(None, None, target, pending, prep)
        base, target = prep.base, prep.target
        pending = [(pending[0][0], prep.source)]
    inputs = MergeInputs(
        base,
        tuple(h for _, h in pending),
        target,
        strategy,
        strict_disjoint,
        source_bases,
        tuple(n for n, _ in pending),
        into,
        discover_target=prep.discover_target if prep else {},
        walk=frozenset(prep.walk) if prep else frozenset(),
        fixed=prep.fixed if prep else {},
        fixed_plans=prep.deletions if prep else {},
        resolver=resolver,
    )
    cls = classify(repo, inputs, timer, settings)
    if prep is not None:
        cls.conflicts = prep.conflicts + cls.conflicts
        cls.resolved = prep.resolved + cls.resolved
        cls.fixed, cls.stats = prep.fixed, prep.stats
    return MergeStep(cls, inputs, target, pending, prep)


def schemas_differ(base: MergeBase, target: Commit, pending: list[tuple[str, Commit]]) -> bool:
    """Whether the schemas must merge first: a source's schema is not the target's, or
    the base's is not (both sides made the same schema change: the rows at the base
    are still in the old layout, which the row routes cannot compare)."""
    return base.commit.schema_id != target.schema_id or any(
        h.schema_id != target.schema_id for _, h in pending
    )


def record_step(result: R.MergeResult, cls: Classification, prep: Prepared | None) -> None:
    """Copy one classification's routes, stats and resolved conflicts into `result`."""
    result.routes = {n: o.stats.route for n, o in cls.tables.items()}
    result.stats = {n: o.stats for n, o in cls.tables.items()}
    result.routes.update({n: st.route for n, st in cls.stats.items()})
    result.stats.update(cls.stats)
    for name, dropped in (prep.dropped if prep else {}).items():
        result.stats[name].dropped_values.update(dropped)
    result.resolved = cls.resolved


def _merge_schemas(
    repo: Repo,
    base: MergeBase,
    target: Commit,
    pending: list[tuple[str, Commit]],
    strategy: str | None,
    dry_run: bool,
    owner: str,
    resolver: Resolver | None = None,
) -> Prepared:
    """Merge the schemas first (merge.schema_merge); a dry run evolves tables only on
    scratch Lance branches no branch owns."""
    if dry_run:
        owner = f"dry-run-{ULID()}"
    return prepare(repo, base, target, pending[0][1], strategy, owner, resolver)


def own_bases(
    repo: Repo, target: Commit, pending: list[tuple[str, Commit]]
) -> tuple[MergeBase, ...]:
    """Each source's own merge base, when one common base cannot serve them all; else ().

    The common base is the newest commit all heads share. A source that saw more of the
    target's history than that (forked from, or merged, a later commit of it) would carry
    the target's changes made after the common base as if they were its own: a row the
    target changed again since would conflict spuriously, or come back after the target
    deleted it. Such sources are merged against their own base (the lowest common
    ancestor of target and source), as merging each on its own would. The check walks
    only the commits since the common base, so sources forked from one commit (ingest
    shards) pay nothing more.
    """
    if len(pending) <= 1:
        return ()
    stop = set(repo.history.merge_bases_many([target.id, *(h.id for _, h in pending)]))
    trunk = (repo.history.ancestors_since(target.id, stop) | {target.id}) - stop
    if not trunk:
        return ()  # the target has not moved since the common base
    for _, head in pending:
        if (repo.history.ancestors_since(head.id, stop) | {head.id}) & trunk:
            return tuple(bases_per_source(repo, target, [h for _, h in pending]))
    return ()


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
    repo: Repo,
    into: str,
    t_ref: RefEntry,
    target: Commit,
    cls: Classification,
    pending: list[tuple[str, Commit]],
    inputs: MergeInputs,
    message: str | None,
    extra: Mapping[str, Any] | None = None,
    checks_id: str | None = None,
    inspect: Callable[[Commit], None] | None = None,
) -> Commit:
    op = "merge" if len(pending) == 1 else "merge_many"
    names = [n for n, _ in pending]
    return publish_classified(
        repo,
        into,
        t_ref,
        target,
        cls,
        op,
        parents=(target.id, *(h.id for _, h in pending)),
        message=message or f"merge {', '.join(names)} into {into}",
        meta={
            "merge_base": inputs.base.commit.id,
            "sources": names,
            **_bases_meta(inputs),
            **(extra or {}),
        },
        checks_id=checks_id,
        inspect=inspect,
    )


def publish_classified(
    repo: Repo,
    into: str,
    t_ref: RefEntry,
    target: Commit,
    cls: Classification,
    op: str,
    *,
    parents: tuple[str, ...],
    message: str,
    meta: dict[str, Any],
    action: str | None = None,
    checks_id: str | object | None = KEEP,
    inspect: Callable[[Commit], None] | None = None,
) -> Commit:
    """Write a classification's effects on `into`'s Lance branches and publish them as
    one commit with `parents` (one CAS from `t_ref`). Merges publish through here, and
    so do the other merge-engine applications (revert, cherry-pick: merge/apply.py).
    `checks_id`: the merged data checks (default: the target's); `inspect(commit)` sees
    the commit before the CAS (the data checks run there; raising publishes nothing)."""

    def still_current() -> bool:
        return repo.refs.head(into) == t_ref

    with Publication(repo, op, into, t_ref, action) as pub:
        states = apply_tables(repo, target, cls, t_ref.incarnation, still_current, pub.effect)
        commit = Commit.create(
            parents=parents,
            message=message,
            schema_id=target.schema_id,
            tables={**target.tables, **cls.fixed, **states},
            meta=meta,
            checks_id=target.checks_id if checks_id is KEEP else cast(str | None, checks_id),
        )
        if inspect is not None:
            inspect(commit)
        pub.publish(commit)
    return commit


def stage(repo: Repo, target: Commit, cls: Classification, checks_id: str | None) -> Commit:
    """A dry run's merged state: the classification's effects written on Lance branches
    of the caller's scratch scope (storage/scratch.py: deleted when it ends), as an
    unstored commit that a Snapshot can read while the scope lasts."""
    owner = f"dry-run-{ULID()}"
    states = apply_tables(repo, target, cls, owner, still_current=lambda: True)
    return Commit.create(
        parents=(target.id,),
        message="dry-run merged state (unstored)",
        schema_id=target.schema_id,
        tables={**target.tables, **cls.fixed, **states},
        meta={"virtual": True},
        checks_id=checks_id,
    )


def _add_check_conflicts(step: MergeStep, merged: MergedChecks) -> None:
    """The data checks' conflicts and resolutions join the step's."""
    if not merged.conflicts and not merged.resolved:
        return
    held = step.cls if step.cls is not None else step.prep
    assert held is not None
    held.conflicts = [*merged.conflicts, *held.conflicts]
    held.resolved = [*merged.resolved, *held.resolved]


def _bases_meta(inputs: MergeInputs) -> dict[str, list[str]]:
    """Each source's own base, when the sources were merged against different ones."""
    if not inputs.source_bases:
        return {}
    return {"source_bases": [b.commit.id for b in inputs.source_bases]}


def record_index_work(result: R.MergeResult, commit: Commit, counts: Counter[str]) -> None:
    """Copy the publish's search-index probes (per table id) into each table's stats."""
    for name, stats in result.stats.items():
        state = commit.tables.get(name)
        if state is not None:
            stats.vector_index_calls = counts[f"{VECTOR_PROBE}:{state.table_id}"]
            stats.fts_index_calls = counts[f"{FTS_PROBE}:{state.table_id}"]


def finish(result: R.MergeResult, timer: PhaseTimer) -> R.MergeResult:
    result.timings = timer.rounded()
    return result


def apply_tables(
    repo: Repo,
    target: Commit,
    cls: Classification,
    owner: str,
    still_current: Callable[[], bool],
    on_effect: Callable[[], None] = lambda: None,
) -> dict[str, TableState]:
    states: dict[str, TableState] = {}
    for name, outcome in cls.tables.items():
        if outcome.adopt is not None:
            states[name] = outcome.adopt
            on_effect()
            continue
        if (outcome.plan is None or outcome.plan.is_empty) and not outcome.columns:
            continue
        state = target.tables[name]
        copy = outcome.copy_plan if outcome.copy_plan is not None else outcome.plan
        if copy is not None and not copy.is_empty:
            state = apply_plan(repo, state, copy, owner, still_current)
        if outcome.adoptions:
            state = _adopt(repo, state, outcome.adoptions, owner, still_current)
        for write in outcome.columns:
            state = _write_column(repo, state, write, owner, still_current)
        states[name] = state
        on_effect()
    return states


def _adopt(
    repo: Repo,
    state: TableState,
    adoptions: list[Adoption],
    owner: str,
    still_current: Callable[[], bool],
) -> TableState:
    """Zero-copy: append the sources' fragments by reference on a branch `owner` owns."""
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    try:
        return adopt(repo.tables, state, adoptions)
    except LanceCasError:
        if not still_current():
            raise HeadMoved() from None
        return adopt(repo.tables, repo.tables.fork(state, owner=owner), adoptions)


def _write_column(
    repo: Repo,
    state: TableState,
    write: ColumnWrite,
    owner: str,
    still_current: Callable[[], bool],
) -> TableState:
    """The column route: one column's values, written column-wise on `owner`'s branch."""
    indexed = index_columns(write.type)
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    try:
        return backfill.apply(repo.tables, state, write, indexed)
    except LanceCasError:
        if not still_current():
            raise HeadMoved() from None
        state = repo.tables.fork(state, owner=owner)
        return backfill.apply(repo.tables, state, write, indexed)


def virtual_merge(
    repo: Repo, base: MergeBase, source: Commit, target: Commit
) -> tuple[Commit, dict[str, set[str]]]:
    """Materialise the merge of two commits as an unreferenced commit (a virtual base).

    Data conflicts resolve to the target's side and are returned as uncertain keys.
    """
    inputs = MergeInputs(base, (source,), target, strategy="ours")
    cls = classify(repo, inputs, PhaseTimer(), DiscoverySettings())
    uncertain: dict[str, set[str]] = {}
    for c in (*cls.resolved, *cls.conflicts):
        uncertain.setdefault(c.table, set()).add(c.entity_id)
    states = apply_tables(repo, target, cls, owner=f"virtual-{ULID()}", still_current=lambda: True)
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
