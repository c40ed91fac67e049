"""Louvain communities by NetworKit's PLM (parallel Louvain method, Staudt & Meyerhenke),
with its refinement phase: bench/algo.py measured it tens of times faster than igraph's
`community_multilevel` at the same modularity (docs/performance.md), and refinement
raises the modularity it reaches (0.16 -> 0.21 on a uniform random graph of 100k nodes).

The graph handed to NetworKit is undirected and unweighted, built from the out-CSR in
one C++ call (`GraphFromCsr` reads each stored entry as one undirected edge: a parallel
edge adds weight, a self-loop counts once in the adjacency, as in igraph); it copies the
offsets and targets as int64, nothing per edge goes through Python.

Threads: `threads` (default: `OMP_NUM_THREADS` when set, else the CPUs this process may
use). On one thread PLM visits nodes in id order and the answer is repeatable (the
same graph gives the same partition); on more, nodes move concurrently and two runs may
give different partitions of about the same modularity. PLM draws no random numbers in
these modes: `seed` seeds NetworKit's generator all the same. NetworKit's thread count
and generator are process-wide, so a run holds them under a lock and puts the thread
count back.
"""

from __future__ import annotations

import os
import threading
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


def communities(csr: Csr, *, resolution: float, seed: int, threads: int) -> np.ndarray:
    """Each node's community label (dense id order, labels as PLM numbers them)."""
    nk = _networkit()
    n = node_count(csr)
    if n == 0:
        return np.zeros(0, np.int64)
    with _LOCK:
        before = nk.getMaxNumberOfThreads()
        nk.setNumberOfThreads(threads)
        try:
            nk.engineering.setSeed(seed, False)
            g = nk.graph.GraphFromCsr(_undirected_csr(csr, n), directed=False, weighted=False)
            plm = nk.community.PLM(
                g, refine=True, gamma=resolution, par="none" if threads == 1 else "balanced"
            )
            plm.run()
            # getPartition swaps the result out of `plm`: call it once only
            return np.asarray(plm.getPartition().getVector(), np.int64)
        finally:
            nk.setNumberOfThreads(before)


def _undirected_csr(csr: Csr, n: int) -> SimpleNamespace:
    """The out-CSR over the union node space as GraphFromCsr reads it (int64, its type):
    a bipartite type's targets are shifted past the source nodes, which own no rows."""
    ns = len(csr.src_keys)
    indptr = np.empty(n + 1, np.int64)
    indptr[: ns + 1] = csr.out_offsets
    indptr[ns + 1 :] = indptr[ns]
    indices = csr.out_targets.astype(np.int64)
    if not csr.same_type:
        indices += ns
    return SimpleNamespace(indptr=indptr, indices=indices, data=np.zeros(0), shape=(n, n))


def _networkit() -> Any:
    """networkit (the `algo` extra), or a one-line `MissingExtraError`."""
    try:
        import networkit  # the `algo` extra, on use: a missing one is its typed error
    except ImportError:
        raise MissingExtraError("Louvain needs networkit: pip install 'graphlake[algo]'") from None
    return networkit
