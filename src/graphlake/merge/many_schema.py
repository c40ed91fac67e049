"""`merge_many` of sources whose schemas differ: fold them into the target one by one.

The N-way classification (`merge.classify`) works on one schema. When some sources
changed the schema, the merge folds: first every source still on the target's schema,
together (the usual N-way step, zero-copy adoption included), then each other source on
its own, exactly as a two-way merge would (schema merge three-way, tables evolved, rows
merged on the merged layout; `merge.schema_merge`). Each step's result is materialised
as an unreferenced commit (like a virtual merge base) so the next step finds its merge
base and its history; its table effects land on Lance branches the target owns (a dry
run: scratch branches). Only the last step's state is published, as one commit with the
target and every source as parents, the caller's message, meta and author and the
merged data checks recorded as a two-way merge records them (`MergeRun.merge_meta`; no
`source_bases`: each step merges against its own base), in one publication (one
recovery record, the `merge_many.*` fault points, one ref CAS): a conflict in any step
publishes nothing, and the conflicts reported are that step's (later steps are not
tried). A strategy resolves each step's conflicts against the result so far ("ours":
the target with the sources folded before), so two sources that disagree in different
steps are resolved by it, where one N-way step would report them as a conflict between
sources.

A property an earlier step renamed keeps its identity in later steps: the schema merge
follows renames through every parent of the history (`schema_merge._side`).

Refused (`MergeError`): `strict_disjoint` (it proves disjointness within one N-way step;
across steps an overlap would merge three-way instead of being refused).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from graphlake import probes
from graphlake.catalog.commits import Commit
from graphlake.errors import MergeConflictError, MergeError
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase
from graphlake.merge.counts import fill_counts
from graphlake.merge.effects import apply_tables, record_index_work
from graphlake.merge.find_base import merge_base_of
from graphlake.merge.run import MergeRun
from graphlake.merge.step import Pending, classify_step, own_bases, record_step
from graphlake.recovery.publication import Publication


def fold(
    run: MergeRun,
    target: Commit,
    pending: Pending,
    base: MergeBase,
    result: R.MergeResult,
    checks_id: str | None = None,
) -> R.MergeResult:
    """Merge `pending` into `target` (the head `run` read) step by step. `checks_id`: the
    merged data checks; with `run.checks` they run on the merged state before it is
    published (a dry run's: on its scratch branches), and may refuse it."""
    repo = run.repo
    if run.strict_disjoint:
        differ = ", ".join(repr(n) for n, h in pending if h.schema_id != target.schema_id)
        what = f"the schema of {differ} differs" if differ else "the base's schema differs"
        raise MergeError(
            f"merge_many: strict_disjoint needs every source on the target's "
            f"schema and the base's; {what} (merge without strict_disjoint)"
        )
    owner = run.branch_owner()
    with _publication(run) as pub, probes.collect() as counts:
        acc: Commit | None = target
        for group in steps(base, target, pending):
            assert acc is not None
            acc = _step(run, acc, group, owner, result, pub)
            if acc is None:
                _count(run, base, target, pending, result)
                return result  # a dry run's conflicts, reported in `result`
        assert acc is not None
        result.outcome = R.MERGED
        _count(run, base, target, pending, result)
        names = [n for n, _ in pending]
        commit = Commit.create(
            parents=(target.id, *(h.id for _, h in pending)),
            message=run.merge_message(names),
            schema_id=acc.schema_id,
            tables=dict(acc.tables),
            meta=run.merge_meta(base.commit.id, names),
            checks_id=checks_id,
        )
        if run.checks is not None:
            with run.timer.phase("data_checks"):
                run.checks.enforce(repo, commit, result)
        if pub is None:
            result.commit = None  # a dry run publishes nothing
            return result
        with run.timer.phase("publish"):
            pub.publish(commit)
    result.commit = commit.id
    record_index_work(result, commit, counts)
    return result


def _count(
    run: MergeRun, base: MergeBase, target: Commit, pending: Pending, result: R.MergeResult
) -> None:
    """Each table's counts as `diff` gives them against the merge base: the steps'
    own are against each step's base and sources (merge/counts.py)."""
    fill_counts(run.repo, base.commit, target, [h for _, h in pending], result.stats, every=True)


def steps(base: MergeBase, target: Commit, pending: Pending) -> list[Pending]:
    """The sources on the target's schema together first, then the others one by one
    (all one by one when the base's schema is not the target's either)."""
    if base.commit.schema_id != target.schema_id:
        return [[p] for p in pending]
    same = [(n, h) for n, h in pending if h.schema_id == target.schema_id]
    return ([same] if same else []) + [
        [(n, h)] for n, h in pending if h.schema_id != target.schema_id
    ]


@contextlib.contextmanager
def _publication(run: MergeRun) -> Iterator[Publication | None]:
    if run.dry_run:
        yield None
        return
    with Publication(run.repo, "merge_many", run.into, run.ref) as pub:
        yield pub


def _step(
    run: MergeRun,
    acc: Commit,
    group: Pending,
    owner: str,
    result: R.MergeResult,
    pub: Publication | None,
) -> Commit | None:
    """Merge `group` into `acc`; the merged state as an unreferenced commit (None: a dry
    run's conflicts, now in `result`; a real merge raises them). Its table effects land
    on Lance branches `owner` owns."""
    repo = run.repo
    with run.timer.phase("resolve_base"):
        base = merge_base_of(repo, [acc, *(h for _, h in group)])
        bases = own_bases(repo, acc, group)
    cls = classify_step(run, base, acc, group, bases)
    earlier = R.MergeResult(
        result.outcome,
        result.source,
        run.into,
        stats=result.stats,
        routes=result.routes,
        resolved=result.resolved,
    )
    if not cls.rows_merged:
        result.resolved = [*earlier.resolved, *cls.resolved]
    else:
        record_step(result, cls)
        result.resolved = [*earlier.resolved, *result.resolved]
        _keep_earlier(earlier, result)
    if cls.conflicts:
        if run.dry_run:
            result.outcome, result.conflicts = R.CONFLICT, list(cls.conflicts)
            return None
        raise MergeConflictError(list(cls.conflicts))
    view = cls.target
    effect = pub.effect if pub is not None else (lambda: None)
    states = apply_tables(repo, cls, owner, run.still_current, effect)
    commit = Commit.create(
        parents=(acc.id, *(h.id for _, h in group)),
        message="merge_many step (unreferenced)",
        schema_id=view.schema_id,
        tables={**view.tables, **cls.fixed, **states},
        meta={"virtual": True},
    )
    repo.commits.put(commit)
    return commit


def _keep_earlier(earlier: R.MergeResult, result: R.MergeResult) -> None:
    """A table an earlier step changed keeps that step's route and stats unless this
    step changed it too."""
    for name, stats in earlier.stats.items():
        now = result.stats.get(name)
        if now is None or now.route == R.NO_CHANGE:
            result.stats[name] = stats
            result.routes[name] = earlier.routes.get(name, stats.route)
            if now is not None:  # values dropped in this step stay listed
                stats.dropped_values.update(now.dropped_values)
        else:
            now.dropped_values = {**stats.dropped_values, **now.dropped_values}
