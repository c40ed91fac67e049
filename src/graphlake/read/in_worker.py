"""What a query worker process (graphlake.isolation) does with a pinned commit: open its
snapshot, one `Repo` per root and options per process, and hand a table back as Arrow
IPC bytes. Shared by the Cypher/SQL jobs (query/isolated.py) and the graph algorithm
jobs (algo/isolated.py). Light to import: the parent server imports the job modules at
start and never opens a graph through them."""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.read.snapshot import Snapshot
    from graphlake.repo import Repo

__all__ = ["ipc_bytes", "worker_snapshot"]


def worker_snapshot(uri: str, storage_options: dict | None, commit: Commit) -> Snapshot:
    # in the worker process only: the parent never loads Lance
    from graphlake.read.snapshot import Snapshot

    return Snapshot(_repo(uri, json.dumps(storage_options, sort_keys=True)), commit)


@functools.lru_cache(maxsize=8)
def _repo(uri: str, options: str) -> Repo:
    # in the worker process only: the parent never opens the graph here
    from graphlake.repo import Repo

    return Repo(uri, json.loads(options))


def ipc_bytes(table: pa.Table) -> bytes:
    """`table` as one Arrow IPC stream (what a worker sends back to the server)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()
