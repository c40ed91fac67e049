"""NetworKit as graphlake.algo reaches it: the import, the graph built from a `Csr`, and
the thread count a run holds.

The graph is built from the out-CSR in one C++ call (`GraphFromCsr`), over the union
node space of nodes.py (a bipartite type's targets shifted past the source nodes, which
own no rows). Each stored entry is one edge: a parallel edge stays a second edge, a
self-loop one edge. Directed, it is the graph as stored (out- and in-edges); undirected,
each entry is one undirected edge (a parallel edge adds weight, a self-loop counts once
in the adjacency, as in igraph). The offsets and targets are copied as int64 (the type
GraphFromCsr reads); nothing per edge goes through Python.

Threads: `threads(None)` is `OMP_NUM_THREADS` when set, else the CPUs this process may
use. NetworKit's thread count and random generator are process-wide, so a run holds
them under `running`, a lock that also puts the thread count back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import numpy as np

from graphlake.adjacency.csr import Csr
from graphlake.algo.nodes import node_count
from graphlake.errors import AlgorithmError, MissingExtraError

MAX_THREADS = 1024
_LOCK = threading.Lock()  # NetworKit's thread count and random generator are global


def default_threads() -> int:
    """`OMP_NUM_THREADS` when it is a positive integer, else the CPUs this process may use."""
    setting = os.environ.get("OMP_NUM_THREADS", "").strip()
    if setting.isdigit() and int(setting) > 0:
        return min(int(setting), MAX_THREADS)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads(value: Any) -> int:
    """A thread count from 1 to MAX_THREADS; None: `default_threads()`."""
    if value is None:
        return default_threads()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise AlgorithmError(f"threads must be an integer from 1 to {MAX_THREADS}, not {value!r}")
    return value


def networkit(algorithm: str) -> Any:
    """networkit (the `algo` extra), or a one-line `MissingExtraError` naming `algorithm`."""
    try:
        import networkit as nk  # the `algo` extra, on use: a missing one is its typed error
    except ModuleNotFoundError:
        raise MissingExtraError(
            f"{algorithm} needs networkit: pip install 'graphlake[algo]'"
        ) from None
    except ImportError as exc:  # installed, but it could not be loaded (e.g. out of memory)
        raise AlgorithmError(
            f"{algorithm}: networkit is installed but failed to load: {exc}"
        ) from None
    return nk


@contextmanager
def running(nk: Any, threads: int) -> Iterator[None]:
    """NetworKit held by this run alone, on `threads` threads; the count is put back."""
    with _LOCK:
        before = nk.getMaxNumberOfThreads()
        nk.setNumberOfThreads(threads)
        try:
            yield
        finally:
            nk.setNumberOfThreads(before)


def graph(nk: Any, csr: Csr, *, directed: bool) -> Any:
    """The unweighted NetworKit graph of `csr` over the union node space (node_count)."""
    n = node_count(csr)
    ns = len(csr.src_keys)
    indptr = np.empty(n + 1, np.int64)
    indptr[: ns + 1] = csr.out_offsets
    indptr[ns + 1 :] = indptr[ns]
    indices = csr.out_targets.astype(np.int64)
    if not csr.same_type:
        indices += ns
    matrix = SimpleNamespace(indptr=indptr, indices=indices, data=np.zeros(0), shape=(n, n))
    return nk.graph.GraphFromCsr(matrix, directed=directed, weighted=False)
