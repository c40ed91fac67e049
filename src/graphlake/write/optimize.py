"""`Graph.optimize`: compact fragments and fold index deltas, as one content-preserving commit.

Many small commits leave many small fragments and index deltas behind; every keyed read
then scans more. Optimizing rewrites them on Lance branches the graph branch owns (a
table it does not own is forked first, copy-free) and publishes one commit whose tables
show exactly the same rows. Lineage discovery is unaffected: with stable row ids a
compaction reports no inserted, updated or deleted rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.intents import MergeIntents
from graphlake.catalog.refs import RefEntry
from graphlake.recovery.publication import Publication
from graphlake.retry import retry_while_head_moves
from graphlake.storage.search_indexes import needs_work
from graphlake.storage.tables import LanceCasError, unindexed_fragments

if TYPE_CHECKING:
    from graphlake.repo import Repo
    from graphlake.schema.model import Schema

MAX_ATTEMPTS = 6


def optimize(repo: Repo, branch: str) -> Commit:
    """Optimize every table of `branch`; returns the new head (or the old one if nothing
    needed doing)."""
    # Unlike a write, optimize starts over on any LanceCasError, also one on the fork it
    # just made while the ref stayed put: redoing it is harmless (content is unchanged).
    return retry_while_head_moves(
        lambda: _optimize_once(repo, branch),
        branch=branch,
        what="optimize",
        attempts=MAX_ATTEMPTS,
        also_retry=(LanceCasError,),
        before_attempt=MergeIntents(repo.store).writer_gate(branch),  # merges go first
    )


def _optimize_once(repo: Repo, branch: str) -> Commit:
    """One attempt on the current head (LanceCasError or ConcurrentWriteError if it moved)."""
    ref, head = repo.branch_head(branch)
    schema = repo.schemas.get(head.schema_id)  # the indexes the head's schema declares
    if all(_needs_nothing(repo, schema, n, st) for n, st in head.tables.items()):
        return head
    with Publication(repo, "optimize", branch, ref) as pub:
        states = {}
        for name, st in head.tables.items():
            states[name] = _optimize_table(repo, schema, branch, ref, name, st)
            if states[name] != st:
                pub.effect()
        changed = {n: st for n, st in states.items() if st != head.tables[n]}
        if not changed:
            return head
        commit = Commit.create(
            parents=(head.id,),
            message="optimize",
            schema_id=head.schema_id,
            tables={**head.tables, **changed},
            meta={"optimize": True},
            checks_id=head.checks_id,
        )
        pub.publish(commit)
    return commit


def _optimize_table(
    repo: Repo, schema: Schema, branch: str, ref: RefEntry, name: str, state: TableState
) -> TableState:
    if _needs_nothing(repo, schema, name, state):
        return state
    owner = ref.incarnation
    if state.owner != owner:
        state = repo.tables.fork(state, owner=owner)
    vectors, texts = _search_specs(schema, name)
    try:
        return repo.tables.optimize(state, vectors, texts)
    except LanceCasError:
        # The ref moved (start over), or a lost or crashed writer left versions no
        # commit references on our Lance branch: optimize a fork of the exact state.
        if repo.refs.head(branch) != ref:
            raise
        return repo.tables.optimize(repo.tables.fork(state, owner=owner), vectors, texts)


def _search_specs(schema: Schema, name: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The search indexes table `name` declares: Vector property -> metric, @search."""
    t = schema.table(name)
    return (dict(t.vector_indexes), t.search) if t is not None else ({}, ())


def _needs_nothing(repo: Repo, schema: Schema, name: str, state: TableState) -> bool:
    ds = repo.tables.open(state)
    return (
        len(ds.get_fragments()) <= 1
        and not unindexed_fragments(ds)
        and not needs_work(ds, *_search_specs(schema, name))
    )
