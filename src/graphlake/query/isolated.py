"""SQL and Cypher queries run in a `graphlake.isolation.Workers` pool (the server's path).

The parent sends the snapshot's root, storage options and commit, the query and its
limits; the worker opens the graph (kept open for the next job on the same root), runs
`read.sql.run_sql` or `query.executor.run_query` there, parse to last row, and sends the
result back as Arrow IPC bytes. The worker's memory bound and the deadline (the query's
timeout plus KILL_GRACE_S, so the worker's own timeout usually answers first, with
DuckDB's message) are enforced by the pool, which kills the worker past either.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.isolation import Stopped, Workers
from graphlake.query import sqlgen
from graphlake.read.in_worker import ipc_bytes, worker_snapshot
from graphlake.read.sql import SqlLimits, timeout_message

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.read.snapshot import Snapshot

KILL_GRACE_S = 0.5  # past the query's own timeout, the worker is killed
WARM = "graphlake.query.isolated:warm"


def run_isolated(
    workers: Workers,
    kind: str,
    snapshot: Snapshot,
    text: str,
    *,
    params: Mapping[str, object] | None = None,
    limits: SqlLimits,
    memory_name: str,
    cancelled: Callable[[], bool] | None = None,
    explain: bool = False,
) -> pa.Table:
    """`kind` "sql" or "cypher": the result of `text` on `snapshot`, computed in a worker.
    `memory_name`: the limit the memory error names. `explain` (Cypher only): the plan
    instead of the rows (query.executor.run_query; the logical plan in its metadata)."""
    repo = snapshot.repo
    args: tuple = (repo.uri, repo.storage_options, snapshot.commit, text, params, limits)
    if explain:
        assert kind == "cypher"  # SQL has no explain
        args += (True,)
    timeout_s = limits.timeout_s
    stopped = Stopped(
        timeout=lambda _elapsed: timeout_message(timeout_s, limits),
        memory=lambda: (
            f"the query needs more memory than allowed ({workers.memory_mb} MB, "
            f"the limit {memory_name}); narrow it or raise the limit"
        ),
    )
    data = workers.run(
        f"graphlake.query.isolated:{kind}_job",
        args,
        timeout_s=None if timeout_s is None else timeout_s + KILL_GRACE_S,
        stopped=stopped,
        cancelled=cancelled,
    )
    return pa.ipc.open_stream(data).read_all()


# --- the worker's side


def sql_job(
    uri: str,
    storage_options: dict | None,
    commit: Commit,
    text: str,
    params: Mapping[str, object] | None,
    limits: SqlLimits,
) -> bytes:
    # in the worker process only: the parent never loads these
    from graphlake.read.sql import run_sql

    return ipc_bytes(run_sql(worker_snapshot(uri, storage_options, commit), text, limits=limits))


def cypher_job(
    uri: str,
    storage_options: dict | None,
    commit: Commit,
    text: str,
    params: Mapping[str, object] | None,
    limits: SqlLimits,
    explain: bool = False,
) -> bytes:
    # in the worker process only: the parent never loads these
    from graphlake.query.executor import run_query

    if limits.adjacency_memory_mb is not None:
        # in the worker process only: the parent never loads these
        from graphlake.adjacency.cache import set_budget

        set_budget(limits.adjacency_memory_mb * 2**20)  # the worker's cache: the server's
    snapshot = worker_snapshot(uri, storage_options, commit)
    return ipc_bytes(run_query(snapshot, text, params, limits=limits, explain=explain))


def warm() -> None:
    """Import and touch what queries use, so its address space is in place before the
    worker's limit is set and the first query does not pay for it."""

    # in the worker process only: the parent never loads these
    import lance

    from graphlake.query import executor  # noqa: F401  (imports the planner, DuckDB)

    # in the worker process only: the parent never loads these
    from graphlake.read.sql import run_sql

    with tempfile.TemporaryDirectory(prefix="graphlake-warm-") as d:
        ds = lance.write_dataset(pa.table({"id": ["a", "b"]}), d)
        ds.to_table(filter="id = 'a'")

        class _Warm:
            def datasets(self) -> dict[str, Any]:
                return {"t": ds}

        run_sql(_Warm(), sqlgen.count_all("t"))  # type: ignore[arg-type]

    # in the worker process only: the parent never loads these
    from graphlake.algo.isolated import warm as warm_algorithms

    warm_algorithms()  # CALL and POST /algo run in these workers too
