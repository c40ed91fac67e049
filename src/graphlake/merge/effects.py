"""Write a classification's table effects and publish them (`publish_classified`).

A `Classification` (`merge.classify`) decides every table; here its effects land on
Lance branches the run's owner owns: a source's exact state adopted, a plan of rows
applied, fragments adopted by reference, columns written column-wise. Merges publish
through `publish_classified` (one recovery record and one compare-and-swap of the target
ref), and so do the other merge-engine applications (revert, cherry-pick:
`merge.apply`, whose commits record their row effects as a write does when plans of
rows were all they applied: `row_effects`); a dry run's data checks read the merged
state `stage` writes on scratch branches; a virtual merge base (`merge.find_base`)
uses `apply_tables` alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from graphlake.catalog.commits import Commit, TableEffect, TableState
from graphlake.merge import result as R
from graphlake.merge.classify import Classification
from graphlake.merge.run import MergeRun
from graphlake.recovery.publication import Publication
from graphlake.retry import HeadMoved
from graphlake.storage.adopt import Adoption, adopt
from graphlake.storage.plan import TablePlan
from graphlake.storage.search_indexes import FTS_PROBE, VECTOR_PROBE
from graphlake.storage.tables import LanceCasError, index_columns
from graphlake.write import backfill
from graphlake.write.backfill import ColumnWrite
from graphlake.write.publish import apply_plan, effects_of

if TYPE_CHECKING:
    from graphlake.repo import Repo

KEEP = object()  # publish_classified: the commit keeps the target's data checks


def publish_classified(
    run: MergeRun,
    cls: Classification,
    op: str,
    *,
    parents: tuple[str, ...],
    message: str,
    meta: dict[str, Any],
    action: str | None = None,
    checks_id: str | object | None = KEEP,
    inspect: Callable[[Commit], None] | None = None,
    record_effects: bool = False,
) -> Commit:
    """Write a classification's effects on `run.into`'s Lance branches and publish them
    as one commit with `parents` (one CAS from `run.ref`). `checks_id`: the merged data
    checks (default: the target's); `inspect(commit)` sees the commit before the CAS
    (the data checks run there; raising publishes nothing). `record_effects`: the commit
    records its row effects as a write does (`Commit.effects`, `row_effects`; a revert
    or cherry-pick, whose one parent is the target: the change feed reads it in runs)."""
    target = cls.target
    with Publication(run.repo, op, run.into, run.ref, action) as pub:
        states = apply_tables(run.repo, cls, run.branch_owner(), run.still_current, pub.effect)
        commit = Commit.create(
            parents=parents,
            message=message,
            schema_id=target.schema_id,
            tables={**target.tables, **cls.fixed, **states},
            meta=meta,
            checks_id=target.checks_id if checks_id is KEEP else cast(str | None, checks_id),
            effects=row_effects(cls, states) if record_effects else None,
        )
        if inspect is not None:
            inspect(commit)
        pub.publish(commit)
    return commit


def row_effects(
    cls: Classification, states: dict[str, TableState]
) -> dict[str, TableEffect] | None:
    """What `apply_tables` did to the rows of each table it changed (`states`), as a
    write records it (`write.publish.effects_of`: rows appended, keys deleted outright),
    read off the plans it applied: exact when every changed table went through its plan
    alone. None (not recorded) when one did not: a source's state adopted, fragments
    adopted by reference (their rows' Lance versions are the source's), a column
    written column-wise, or a schema merge (tables evolved against another layout)."""
    if cls.schema is not None:
        return None
    plans: dict[str, TablePlan] = {}
    for name, state in states.items():
        if state == cls.target.tables.get(name):
            continue  # adopted the state the target already has: no change
        outcome = cls.tables[name]
        if outcome.adopt is not None or outcome.adoptions or outcome.columns:
            return None
        plan = outcome.copy_plan if outcome.copy_plan is not None else outcome.plan
        if plan is not None:
            plans[name] = plan
    return effects_of(plans)


def stage(run: MergeRun, cls: Classification, checks_id: str | None) -> Commit:
    """A dry run's merged state: the classification's effects written on Lance branches
    of the caller's scratch scope (storage/scratch.py: deleted when it ends), as an
    unstored commit that a Snapshot can read while the scope lasts."""
    target = cls.target
    states = apply_tables(run.repo, cls, run.branch_owner(), still_current=lambda: True)
    return Commit.create(
        parents=(target.id,),
        message="dry-run merged state (unstored)",
        schema_id=target.schema_id,
        tables={**target.tables, **cls.fixed, **states},
        meta={"virtual": True},
        checks_id=checks_id,
    )


def record_index_work(result: R.MergeResult, commit: Commit, counts: Counter[str]) -> None:
    """Copy the publish's search-index probes (per table id) into each table's stats."""
    for name, stats in result.stats.items():
        state = commit.tables.get(name)
        if state is not None:
            stats.vector_index_calls = counts[f"{VECTOR_PROBE}:{state.table_id}"]
            stats.fts_index_calls = counts[f"{FTS_PROBE}:{state.table_id}"]


def apply_tables(
    repo: Repo,
    cls: Classification,
    owner: str,
    still_current: Callable[[], bool],
    on_effect: Callable[[], None] = lambda: None,
) -> dict[str, TableState]:
    """Each changed table's new state, its effects written on a Lance branch `owner`
    owns (forked from `cls.target`'s state when another owns it)."""
    target = cls.target
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
            state = _adopt(repo, state, list(outcome.adoptions), owner, still_current)
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
