"""One merge step: merge the schemas if they differ, then classify the rows.

`classify_step` is what a two-way merge, an N-way `merge_many`, each step of a
`merge_many` fold across schemas (`merge.many_schema`), a revert and a cherry-pick all
do between reading the target's head and publishing: the schema merge
(`merge.schema_merge`) first when the schemas differ (one source at most), then the row
classification (`merge.classify`) on the merged layout. Its answer is one immutable
`Classification`; `record_step` copies its routes and stats into the result.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit
from graphlake.merge import result as R
from graphlake.merge.base import MergeBase
from graphlake.merge.classify import Classification, MergeInputs, classify
from graphlake.merge.find_base import bases_per_source
from graphlake.merge.run import MergeRun
from graphlake.merge.schema_merge import prepare

if TYPE_CHECKING:
    from graphlake.merge.data_checks import MergedChecks
    from graphlake.repo import Repo

Pending = list[tuple[str, Commit]]


def classify_step(
    run: MergeRun,
    base: MergeBase,
    target: Commit,
    pending: Pending,
    source_bases: tuple[MergeBase, ...] = (),
    checks: MergedChecks | None = None,
) -> Classification:
    """Merge the schemas if they differ (one source at most), then classify the rows of
    the target and `pending` (after a schema merge: their views in the merged layout).
    `checks`: the merged data checks, whose conflicts and resolutions come first."""
    schema = None
    if schemas_differ(base, target, pending):
        assert len(pending) == 1, "merge_many folds sources of another schema one by one"
        # A dry run evolves tables only on scratch Lance branches no branch owns.
        with run.timer.phase("schema"):
            schema = prepare(run, base, target, pending[0][1], run.branch_owner())
        if schema.merged:
            base, target = schema.base, schema.target
            pending = [(pending[0][0], schema.source)]
    inputs = MergeInputs(
        base,
        tuple(h for _, h in pending),
        target,
        source_bases,
        tuple(n for n, _ in pending),
        schema=schema,
        checks=checks,
    )
    return classify(run, inputs)


def schemas_differ(base: MergeBase, target: Commit, pending: Pending) -> bool:
    """Whether the schemas must merge first: a source's schema is not the target's, or
    the base's is not (both sides made the same schema change: the rows at the base
    are still in the old layout, which the row routes cannot compare)."""
    return base.commit.schema_id != target.schema_id or any(
        h.schema_id != target.schema_id for _, h in pending
    )


def record_step(result: R.MergeResult, cls: Classification) -> None:
    """Copy one classification's routes, stats and resolved conflicts into `result`
    (the stats as copies: the result's change later, the classification's never)."""
    stats = {n: o.stats for n, o in cls.tables.items()}
    if cls.schema is not None:
        stats.update(cls.schema.stats)
    stats = copy.deepcopy(stats)
    for name, dropped in (cls.schema.dropped if cls.schema is not None else {}).items():
        stats[name].dropped_values.update(dropped)
    result.stats = stats
    result.routes = {n: st.route for n, st in stats.items()}
    result.resolved = list(cls.resolved)


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
