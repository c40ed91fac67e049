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
from graphlake.catalog.refs import RefEntry
from graphlake.errors import ConcurrentWriteError
from graphlake.recovery.publication import Publication
from graphlake.retry import Backoff
from graphlake.storage.tables import LanceCasError

if TYPE_CHECKING:
    from graphlake.graph import Graph

MAX_ATTEMPTS = 6


def optimize(graph: Graph, branch: str) -> Commit:
    """Optimize every table of `branch`; returns the new head (or the old one if nothing
    needed doing)."""
    backoff = Backoff(MAX_ATTEMPTS)
    for attempt in range(MAX_ATTEMPTS):
        backoff.start()
        ref, head = graph._head(branch)
        if all(_needs_nothing(graph, st) for st in head.tables.values()):
            return head
        with Publication(graph, "optimize", branch, ref) as pub:
            try:
                states = {}
                for name, st in head.tables.items():
                    states[name] = _optimize_table(graph, branch, ref, st)
                    if states[name] != st:
                        pub.effect()
            except LanceCasError:
                backoff.wait(attempt)
                continue
            changed = {n: st for n, st in states.items() if st != head.tables[n]}
            if not changed:
                return head
            commit = Commit.create(
                parents=(head.id,), message="optimize", schema_id=head.schema_id,
                tables={**head.tables, **changed}, meta={"optimize": True},
            )
            try:
                pub.publish(commit)
            except ConcurrentWriteError:
                backoff.wait(attempt)
                continue
            return commit
    raise ConcurrentWriteError(f"branch {branch!r} kept moving during optimize; retry later")


def _optimize_table(graph: Graph, branch: str, ref: RefEntry, state: TableState) -> TableState:
    if _needs_nothing(graph, state):
        return state
    owner = ref.incarnation
    if state.owner != owner:
        state = graph.tables.fork(state, owner=owner)
    try:
        return graph.tables.optimize(state)
    except LanceCasError:
        # The ref moved (start over), or a lost or crashed writer left versions no
        # commit references on our Lance branch: optimize a fork of the exact state.
        if graph.refs.head(branch) != ref:
            raise
        return graph.tables.optimize(graph.tables.fork(state, owner=owner))


def _needs_nothing(graph: Graph, state: TableState) -> bool:
    from graphlake.storage.tables import _unindexed_fragments

    ds = graph.tables.open(state)
    return len(ds.get_fragments()) <= 1 and not _unindexed_fragments(ds)
