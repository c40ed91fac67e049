"""Algorithms run in a `graphlake.isolation.Workers` pool (the server's path), as SQL and
Cypher queries do (query/isolated.py): the parent sends the root, storage options,
commit, algorithm, edge type, options and the rows wanted; the worker opens the graph
(kept open for the next job on the same root), runs `run.run` with the run's own memory
limit as `max_memory_mb` (the server's `query_memory_mb`, as for a Cypher `CALL`: a run
estimated past it is refused with `AlgorithmMemoryError` before it starts; the pool's own
limit, `query_memory_mb + adjacency_memory_mb` above the worker's ready size, catches
what the estimate misses) and `max_threads` (`algo_threads`), with the worker's
adjacency cache held to `adjacency_memory_mb`, and sends back the total row count and the
asked-for slice as Arrow IPC bytes, or the whole answer when it is at most `whole_bytes`
(Arrow buffer bytes), so the caller can keep it for the next page (server/algo_cache.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.isolation import Stopped, Workers
from graphlake.read.in_worker import ipc_bytes, worker_snapshot

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.read.snapshot import Snapshot

KILL_GRACE_S = 0.5  # past the run's timeout, the worker is killed


def run_isolated(
    workers: Workers,
    snapshot: Snapshot,
    name: str,
    edge_type: str,
    options: Mapping[str, Any],
    *,
    offset: int,
    limit: int,
    timeout_s: float | None,
    timeout_name: str,
    memory_mb: int,
    memory_name: str,
    max_threads: int | None = None,
    adjacency_memory_mb: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    whole_bytes: int = 0,
) -> tuple[int, pa.Table, bool]:
    """(rows in the whole answer, rows offset..offset+limit of algorithm `name`, False),
    or (rows, the whole answer, True) when it has at most `whole_bytes`. `memory_mb`: the
    run's `max_memory_mb` (its estimate's limit), named `memory_name` in errors."""
    repo = snapshot.repo
    args = (
        repo.uri,
        repo.storage_options,
        snapshot.commit,
        name,
        edge_type,
        dict(options),
        memory_mb,
        offset,
        limit,
        whole_bytes,
        max_threads,
        adjacency_memory_mb,
    )
    stopped = Stopped(
        timeout=lambda _elapsed: (
            f"the algorithm ran past {timeout_s:g} s (the limit {timeout_name}); run it on a "
            "smaller edge type or raise the limit"
        ),
        memory=lambda: (
            f"the algorithm needs more memory than its query worker may hold "
            f"({workers.memory_mb} MB: the limit {memory_name} plus the worker's adjacency "
            "cache); run it on a smaller edge type or raise the limit"
        ),
    )
    total, data, whole = workers.run(
        "graphlake.algo.isolated:algo_job",
        args,
        timeout_s=None if timeout_s is None else timeout_s + KILL_GRACE_S,
        stopped=stopped,
        cancelled=cancelled,
    )
    return total, pa.ipc.open_stream(data).read_all(), whole


# --- the worker's side


def algo_job(
    uri: str,
    storage_options: dict | None,
    commit: Commit,
    name: str,
    edge_type: str,
    options: dict[str, Any],
    memory_mb: int,
    offset: int,
    limit: int,
    whole_bytes: int = 0,
    max_threads: int | None = None,
    adjacency_memory_mb: int | None = None,
) -> tuple[int, bytes, bool]:
    # in the worker process only: the parent never loads igraph
    from graphlake.algo.run import check_options, lookup, run

    # before `run` binds them: a parameter named like its own keywords (max_memory_mb,
    # max_threads) is refused as unknown, never taken as a limit
    check_options(lookup(name), options)
    if adjacency_memory_mb is not None:
        # in the worker process only: the parent never loads these
        from graphlake.adjacency.cache import set_budget

        set_budget(adjacency_memory_mb * 2**20)  # the worker's cache: the server's, as Cypher's
    table = run(
        worker_snapshot(uri, storage_options, commit),
        name,
        edge_type,
        max_memory_mb=memory_mb,
        max_threads=max_threads,
        **options,
    )
    if table.nbytes <= whole_bytes:
        return table.num_rows, ipc_bytes(table), True
    return table.num_rows, ipc_bytes(table.slice(offset, limit)), False


def warm() -> None:
    """Load the algorithm libraries (when installed) and start NetworKit's OpenMP threads
    (`OMP_NUM_THREADS` of them: the server's `algo_threads`) before the worker's limit is
    set (graphlake.isolation), as the query libraries are: their code and thread stacks
    are then part of the worker's size when ready, not of a job's memory, and a library
    can never fail to load under the limit (which read as a missing extra)."""
    try:  # the `algo` extra, optional: loaded here, in the worker, on purpose
        import igraph  # the other algorithms
        import networkit as nk  # Louvain and PageRank
    except ModuleNotFoundError:  # no `algo` extra: algorithm runs say so themselves
        return
    igraph.Graph(n=3, edges=[(0, 1), (1, 2)]).connected_components()
    g = nk.graph.Graph(4)
    for a, b in ((0, 1), (1, 2), (2, 3)):
        g.addEdge(a, b)
    nk.community.PLM(g, refine=True, par="balanced").run()  # an OpenMP parallel region
