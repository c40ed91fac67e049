"""Graph algorithms as pure functions on one edge type's adjacency (`Csr`).

Each returns an Arrow table of node `id` (and `type` for a bipartite edge type, see
nodes.py) and one value column, ordered by id. igraph computes, except PageRank and
Louvain, which NetworKit computes (nkit.py); both are the `algo` extra, imported on first
use (`import graphlake` stays free of them; without them a run raises
`MissingExtraError`). Edges are directed from `src` to `dst`; algorithms on undirected
graphs read each edge as undirected. What each does:

- `pagerank`: PageRank of the directed graph by NetworKit's power iteration, run until
  the ranks move by at most PAGERANK_TOL in all in one step, on one thread (repeatable to
  the last bit); a parallel edge adds weight, a self-loop is an out-edge, a node without
  out-edges spreads its rank evenly over all nodes (as networkx and igraph). Ranks sum
  to 1.
- `weakly_connected_components` / `strongly_connected_components`: `component` labels
  numbered 0, 1, ... in the order of each component's smallest id.
- `louvain` (Blondel et al.) / `leiden` (Traag et al., modularity objective): `community`
  labels, numbered like components, on the undirected multigraph (a parallel edge adds
  weight, a self-loop counts). Louvain runs on NetworKit (PLM with refinement, plm.py) on
  `threads` threads: repeatable on one thread, otherwise two runs may differ; Leiden on
  igraph, where `seed` makes a run repeatable.
- `kcore`: each node's `core` number (the largest k such that the node is in the k-core)
  of the simple undirected graph: a neighbour counts once, self-loops are ignored.
- `shortest_paths`: `distance` along out-edges from `source` (a key of the source node
  type) to every node it reaches (itself at 0), summing `weights` (one per edge row of
  `csr.edge_ids`; None: each edge counts 1). Unreachable nodes are not in the answer.

Each run first checks its estimated memory against `max_memory_mb` (memory.py).
"""

from __future__ import annotations

import random
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from graphlake.adjacency.csr import Csr
from graphlake.algo import memory, nkit, params, plm
from graphlake.algo.nodes import answer, edge_pairs, node_count
from graphlake.errors import AlgorithmError, KeyNotFoundError, MissingExtraError

if TYPE_CHECKING:
    import igraph

# igraph draws from one process-wide random generator: a seeded run holds it alone.
_RNG_LOCK = threading.Lock()

# PageRank iterates until the ranks move by at most this much in all (L1 norm) in one
# step: then no rank is further than damping / (1 - damping) times that from the exact
# answer (under 6e-10 at the default damping).
PAGERANK_TOL = 1e-10
# Power iterations PageRank may take (NetworKit iterates until the change is below the
# tolerance): 19-95 at damping 0.85 on the bench's graphs, about 2,300 at 0.99. A run
# that has not converged by then is refused, never answered half-way.
PAGERANK_MAX_ITERATIONS = 1_000


def pagerank(
    csr: Csr,
    *,
    damping: float = 0.85,
    types: tuple[str, str] = ("", ""),
    max_memory_mb: int = params.MAX_MEMORY_MB,
) -> pa.Table:
    d = params.unit_open("damping", damping)
    limit = params.integer("max_memory_mb", max_memory_mb)
    memory.check("pagerank", node_count(csr), csr.edge_count, limit)
    nk = nkit.networkit("pagerank")
    ranks = np.zeros(0)
    if node_count(csr):
        with nkit.running(nk, 1):  # on more threads two runs differ in the last bits
            sinks = nk.centrality.SinkHandling.DistributeSinks
            pr = nk.centrality.PageRank(
                nkit.graph(nk, csr, directed=True), damp=d, tol=PAGERANK_TOL, distributeSinks=sinks
            )
            pr.norm = nk.centrality.Norm.L1_NORM
            pr.maxIterations = PAGERANK_MAX_ITERATIONS
            pr.run()
            if pr.numberOfIterations() >= PAGERANK_MAX_ITERATIONS:
                raise AlgorithmError(
                    f"pagerank did not converge within {PAGERANK_MAX_ITERATIONS} iterations "
                    f"at damping {d}; a lower damping converges faster"
                )
            ranks = np.asarray(pr.scores(), np.float64)
    return answer(csr, *types, "rank", pa.array(ranks, pa.float64()))


def weakly_connected_components(
    csr: Csr, *, types: tuple[str, str] = ("", ""), max_memory_mb: int = params.MAX_MEMORY_MB
) -> pa.Table:
    g = _graph(csr, "weakly_connected_components", max_memory_mb)
    labels = np.asarray(g.connected_components(mode="weak").membership, np.int64)
    return answer(csr, *types, "component", pa.array(labels), labels=True)


def strongly_connected_components(
    csr: Csr, *, types: tuple[str, str] = ("", ""), max_memory_mb: int = params.MAX_MEMORY_MB
) -> pa.Table:
    g = _graph(csr, "strongly_connected_components", max_memory_mb)
    labels = np.asarray(g.connected_components(mode="strong").membership, np.int64)
    return answer(csr, *types, "component", pa.array(labels), labels=True)


def louvain(
    csr: Csr,
    *,
    resolution: float = 1.0,
    seed: int = 0,
    threads: int | None = None,
    types: tuple[str, str] = ("", ""),
    max_memory_mb: int = params.MAX_MEMORY_MB,
) -> pa.Table:
    r = params.positive("resolution", resolution)
    s = params.seed(seed)
    t = nkit.threads(threads)
    limit = params.integer("max_memory_mb", max_memory_mb)
    memory.check("louvain", node_count(csr), csr.edge_count, limit, threads=t)
    labels = plm.communities(csr, resolution=r, seed=s, threads=t)
    return answer(csr, *types, "community", pa.array(labels), labels=True)


def leiden(
    csr: Csr,
    *,
    resolution: float = 1.0,
    iterations: int = 10,
    seed: int = 0,
    types: tuple[str, str] = ("", ""),
    max_memory_mb: int = params.MAX_MEMORY_MB,
) -> pa.Table:
    r = params.positive("resolution", resolution)
    n = params.iterations("iterations", iterations)
    s = params.seed(seed)
    g = _graph(csr, "leiden", max_memory_mb).as_undirected(mode="each")
    with _seeded(s):
        found = (
            g.community_leiden(
                objective_function="modularity", resolution=r, n_iterations=n
            ).membership
            if g.vcount()
            else []
        )
    labels = np.asarray(found, np.int64)
    return answer(csr, *types, "community", pa.array(labels), labels=True)


def kcore(
    csr: Csr, *, types: tuple[str, str] = ("", ""), max_memory_mb: int = params.MAX_MEMORY_MB
) -> pa.Table:
    g = _graph(csr, "kcore", max_memory_mb).as_undirected(mode="collapse")
    g.simplify(multiple=True, loops=True)
    cores = np.asarray(g.coreness(mode="all") if g.vcount() else [], np.int64)
    return answer(csr, *types, "core", pa.array(cores))


def shortest_paths(
    csr: Csr,
    source: str,
    weights: np.ndarray | None = None,
    *,
    types: tuple[str, str] = ("", ""),
    max_memory_mb: int = params.MAX_MEMORY_MB,
) -> pa.Table:
    start = int(csr.dense_src([source])[0]) if isinstance(source, str) else -1
    if start < 0:
        raise KeyNotFoundError(
            f"source {source!r} is no node of type {types[0] or 'the source type'}"
        )
    by_position = None
    if weights is not None:
        weights = np.asarray(weights, np.float64)
        if len(weights) != csr.edge_count:
            raise AlgorithmError(f"{len(weights)} weights for {csr.edge_count} edges")
        if not np.isfinite(weights).all() or (weights < 0).any():
            raise AlgorithmError(
                "edge weights must be finite and not negative (shortest paths add them up)"
            )
        by_position = weights[csr.out_edges].tolist()  # igraph edge i is CSR position i
    g = _graph(csr, "shortest_paths", max_memory_mb)
    found = np.asarray(g.distances(source=[start], weights=by_position, mode="out")[0])
    reached = np.isfinite(found)
    return answer(csr, *types, "distance", pa.array(found, pa.float64()), keep=reached)


def _igraph() -> Any:
    """igraph (the `algo` extra), or a one-line `MissingExtraError`."""
    try:
        import igraph  # the `algo` extra, on use: a missing one is its typed error
    except ModuleNotFoundError:
        raise MissingExtraError(
            "graph algorithms need igraph: pip install 'graphlake[algo]'"
        ) from None
    except ImportError as exc:  # installed, but it could not be loaded (e.g. out of memory)
        raise AlgorithmError(f"igraph is installed but failed to load: {exc}") from None
    return igraph


def _graph(csr: Csr, algorithm: str, max_memory_mb: int) -> igraph.Graph:
    igraph = _igraph()
    limit = params.integer("max_memory_mb", max_memory_mb)
    memory.check(algorithm, node_count(csr), csr.edge_count, limit)
    g = igraph.Graph(n=node_count(csr), directed=True)
    if csr.edge_count:
        g.add_edges(edge_pairs(csr))
    return g


class _seeded:
    """igraph's random generator seeded for one run, then put back (under a lock)."""

    def __init__(self, seed: int):
        self.seed = seed

    def __enter__(self) -> None:
        _RNG_LOCK.acquire()
        _igraph().set_random_number_generator(random.Random(self.seed))

    def __exit__(self, *exc: Any) -> None:
        _igraph().set_random_number_generator(random)
        _RNG_LOCK.release()
