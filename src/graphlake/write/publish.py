"""Publish a transaction: resolve against the head, validate, write tables, CAS the ref.

All table effects land on Lance branches the graph branch owns, as versions no graph
commit references yet; the compare-and-swap of the branch ref is the single moment the
change becomes visible. A writer that loses the race re-resolves on the new head
(bounded), so updates are never lost and keys never duplicated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import lance
import pyarrow.compute as pc

from graphlake.catalog.commits import (
    EFFECT_KEYS_PER_TABLE,
    Commit,
    TableEffect,
    TableState,
    bounded_effects,
)
from graphlake.catalog.intents import MergeIntents
from graphlake.catalog.refs import RefEntry
from graphlake.errors import DataError, NullValueError, StaleReadError
from graphlake.recovery.publication import Publication
from graphlake.retry import HeadMoved, retry_while_head_moves
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.plan import Op, ReadSet, TablePlan
from graphlake.storage.tables import LanceCasError, index_columns
from graphlake.write import backfill
from graphlake.write.cascade import expand_cascades
from graphlake.write.resolve import resolve_table
from graphlake.write.validate import validate

if TYPE_CHECKING:
    from graphlake.repo import Repo

MAX_ATTEMPTS = 10


def publish(
    repo: Repo,
    branch: str,
    message: str,
    ops: list[Op],
    meta: dict | None = None,
    *,
    reads: ReadSet | None = None,
    expect_head: str | None = None,
    deferred: frozenset[str] = frozenset(),
    schema_id: str | None = None,
    columns: Sequence[backfill.ColumnWrite] = (),
) -> Commit:
    """Publish `ops` (and `columns`, staged `set_property` calls) as one commit on
    `branch`; returns the head unchanged if they net to 0 (unless `meta` is given: then
    the commit records it even without data changes).

    `reads`: keys the caller read at `reads.base`; `expect_head`: the head the caller
    requires. Either failing on the head we would publish on raises `StaleReadError`
    (checked on every attempt, and the ref CAS makes that head the one we publish on).

    Each attempt first waits (briefly, bounded) while a merge into `branch` holds an
    intent, so merges land even while writers keep the branch busy.

    `deferred`: constraint kinds not checked here (see `violations_by_check`); only an
    ingest shard, whose merge checks them, passes any.

    `schema_id`: the schema the rows in `ops` were checked against; if the branch's
    schema is another one by now, raises `StaleReadError` (stage them again).
    """
    return retry_while_head_moves(
        lambda: _publish_once(
            repo, branch, message, ops, meta, reads, expect_head, deferred, schema_id, columns
        ),
        branch=branch,
        what="write",
        attempts=MAX_ATTEMPTS,
        before_attempt=MergeIntents(repo.store).writer_gate(branch),
    )


def _publish_once(
    repo: Repo,
    branch: str,
    message: str,
    ops: list[Op],
    meta: dict | None,
    reads: ReadSet | None,
    expect_head: str | None,
    deferred: frozenset[str],
    schema_id: str | None,
    columns: Sequence[backfill.ColumnWrite] = (),
) -> Commit:
    """One attempt on the current head (HeadMoved or ConcurrentWriteError if it moved)."""
    ref, head = repo.branch_head(branch)
    _check_preconditions(repo, branch, head, reads, expect_head)
    if schema_id is not None and (ops or columns) and head.schema_id != schema_id:
        raise StaleReadError(
            f"the schema of branch {branch!r} changed after the transaction staged its rows; "
            f"nothing was written (stage them again on the new schema)"
        )
    plans = plan_ops(repo, head, ops, deferred)
    _check_columns(repo, head, plans, columns)
    if all(p.is_empty for p in plans.values()) and not meta and not columns:
        return head
    if columns:
        meta = {**(meta or {}), backfill.BACKFILL_META: backfill.backfill_meta(list(columns))}
    with Publication(repo, "write", branch, ref) as pub:
        states = apply_plans(repo, branch, ref, head, plans, pub)
        states.update(_apply_columns(repo, branch, ref, head, columns, pub))
        commit = Commit.create(
            parents=(head.id,),
            message=message,
            schema_id=head.schema_id,
            tables={**head.tables, **states},
            meta=meta,
            checks_id=head.checks_id,
            effects=None if columns else effects_of(plans),
        )
        pub.publish(commit)
    return commit


def effects_of(plans: dict[str, TablePlan]) -> dict[str, TableEffect] | None:
    """What the plans do to each table's rows, for the commit's record (None when one
    replaces a whole table: an overwrite deletes every row, which no bounded record
    names). Only a bounded number of deleted keys become Python strings."""
    if any(p.delete_all for p in plans.values()):
        return None
    found: dict[str, tuple[int, list[str] | int]] = {}
    for name, plan in plans.items():
        if plan.is_empty:
            continue
        n = plan.deleted_old.num_rows
        keys = plan.deleted_old.column("id").to_pylist() if n <= EFFECT_KEYS_PER_TABLE else n
        found[name] = (plan.inserted.num_rows + plan.updated_new.num_rows, keys)
    return bounded_effects(found)


def _check_preconditions(
    repo: Repo, branch: str, head: Commit, reads: ReadSet | None, expect_head: str | None
) -> None:
    if expect_head is not None and head.id != expect_head:
        raise StaleReadError(
            f"branch {branch!r} moved: its head is {head.id[:12]}, the transaction "
            f"expected {expect_head[:12]}; nothing was written"
        )
    if reads is None or reads.base is None or reads.base == head.id:
        return
    base = repo.commits.get(reads.base)
    for table, keys in sorted(reads.keys.items()):
        then, now = base.tables[table], head.tables[table]
        if then == now:
            continue
        wanted = sorted(keys)
        before = _rows_by_key(repo.tables.open(then), wanted)
        after = _rows_by_key(repo.tables.open(now), wanted)
        changed = [k for k in wanted if before.get(k) != after.get(k)]
        if changed:
            shown = ", ".join(map(repr, changed[:5])) + (" ..." if len(changed) > 5 else "")
            raise StaleReadError(
                f"{table} {shown} changed on {branch!r} after the transaction read it; "
                f"nothing was written (read again and retry, e.g. with Graph.transact)"
            )


def _rows_by_key(ds: lance.LanceDataset, keys: list[str]) -> dict[str, dict]:
    return {r["id"]: r for r in rows_where_in(ds, "id", keys).to_pylist()}


def plan_ops(
    repo: Repo, head: Commit, ops: list[Op], deferred: frozenset[str] = frozenset()
) -> dict[str, TablePlan]:
    """Resolve and validate every table's operations against `head` and its schema."""
    schema = repo.schemas.of(head)

    def dataset(name: str) -> lance.LanceDataset:
        return repo.tables.open(head.tables[name])

    by_table: dict[str, list[Op]] = {}
    for op in expand_cascades(schema, ops, dataset):
        by_table.setdefault(op.table, []).append(op)

    plans: dict[str, TablePlan] = {}
    order = [n for n in schema.nodes if n in by_table] + [n for n in schema.edges if n in by_table]
    for name in order:
        plans[name] = resolve_table(schema.require(name), dataset(name), by_table[name])
    for plan in plans.values():
        _check_complete_rows(plan)
    validate(schema, plans, dataset, deferred)
    return plans


def _check_complete_rows(plan: TablePlan) -> None:
    written = plan.written
    for field in plan.schema:
        if not field.nullable and written.column(field.name).null_count:
            col = written.column(field.name)
            ids = written.column("id").filter(pc.is_null(col)).to_pylist()[:5]
            raise NullValueError(
                f"{plan.name}.{field.name} is required (missing for {', '.join(map(repr, ids))})"
            )


def _check_columns(
    repo: Repo, head: Commit, plans: dict[str, TablePlan], columns: Sequence[backfill.ColumnWrite]
) -> None:
    for write in columns:
        plan = plans.get(write.table)
        if plan is not None and not plan.is_empty:
            raise DataError(
                f"{write.table}: a transaction that backfills a property "
                f"changes no rows of that type (commit the rows first)"
            )
        backfill.check_against(repo.tables.open(head.tables[write.table]), write)


def _apply_columns(
    repo: Repo,
    branch: str,
    ref: RefEntry,
    head: Commit,
    columns: Sequence[backfill.ColumnWrite],
    pub: Publication,
) -> dict[str, TableState]:
    """Write each backfilled column on a Lance branch `ref`'s incarnation owns."""
    states: dict[str, TableState] = {}
    for write in columns:
        state = states.get(write.table, head.tables[write.table])
        if state.owner != ref.incarnation:
            state = repo.tables.fork(state, owner=ref.incarnation)
        try:
            state = backfill.apply(repo.tables, state, write, index_columns(write.type))
        except LanceCasError:
            if repo.refs.head(branch) != ref:
                raise HeadMoved() from None
            state = repo.tables.fork(state, owner=ref.incarnation)
            state = backfill.apply(repo.tables, state, write, index_columns(write.type))
        states[write.table] = state
        pub.effect()
    return states


def apply_plans(
    repo: Repo,
    branch: str,
    ref: RefEntry,
    head: Commit,
    plans: dict[str, TablePlan],
    pub: Publication,
) -> dict[str, TableState]:
    """Write every non-empty plan on a Lance branch owned by `ref`'s incarnation."""

    def still_current() -> bool:
        return repo.refs.head(branch) == ref

    states = {}
    for name, plan in plans.items():
        if not plan.is_empty:
            states[name] = apply_plan(repo, head.tables[name], plan, ref.incarnation, still_current)
            pub.effect()
    return states


def apply_plan(
    repo: Repo,
    state: TableState,
    plan: TablePlan,
    owner: str,
    still_current: Callable[[], bool],
) -> TableState:
    """Apply `plan` to the table at `state`, on a Lance branch `owner` may append to.

    Forks first unless `owner` owns the state's Lance branch (lazy first touch).
    """
    indexed = index_columns(plan.type)
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    args = (plan.removed_ids, plan.delete_all, plan.written, indexed)
    try:
        return repo.tables.apply(state, *args)
    except LanceCasError:
        # Our Lance branch moved: either another writer of this graph branch got there
        # first (the ref moved too: start over) or a lost writer left versions no commit
        # references (fork from the exact state and write there instead).
        if not still_current():
            raise HeadMoved() from None
        state = repo.tables.fork(state, owner=owner)
        return repo.tables.apply(state, *args)
