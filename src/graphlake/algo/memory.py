"""The memory an algorithm run needs, estimated before it starts from the node and edge
counts, and refused past its limit (`AlgorithmMemoryError`): a run is whole or absent.

The figures are bytes per edge and per node on top of the adjacency itself (about 56
bytes per edge, counted by the caller): the source ids and the edge list handed to igraph
(16 B per edge) and igraph's own graph (from, to and two orderings: 32 B per edge), a second,
undirected copy for Louvain, Leiden and k-core, the weights as a list for shortest paths,
and per node the result as a Python list and as Arrow columns. Checked against
bench/algo.py at 1M nodes / 10M edges: PageRank estimated at 1.36 GB with the adjacency,
the benchmark process held 1.47 GB resident while running it (interpreter, libraries
and the benchmark's weights included); on NetworKit (nkit.py: int64 offsets and targets,
out- and in-edges, two rank vectors) 1.23 GB. Louvain runs on NetworKit (plm.py): its int64 copy
of the targets, its undirected graph (each edge from both ends) and the coarsened graphs
fit the same figures (at 100k nodes / 1M edges, two threads: 85 MiB measured, 128 MiB
estimated), plus 16 bytes per node and thread (PLM's per-thread arrays).
"""

from __future__ import annotations

from graphlake.errors import AlgorithmMemoryError

_BASE = (64, 160)  # (bytes per edge, bytes per node) of every run
_EXTRA = {  # what an algorithm adds to _BASE
    "louvain": (48, 64),
    "leiden": (48, 64),
    "kcore": (48, 32),
    "shortest_paths": (48, 32),
}


_PER_THREAD_NODE = {"louvain": 16}  # bytes per node and thread


def estimate(algorithm: str, nodes: int, edges: int, threads: int = 1) -> int:
    per_edge, per_node = _BASE
    extra_edge, extra_node = _EXTRA.get(algorithm, (0, 0))
    per_node += extra_node + _PER_THREAD_NODE.get(algorithm, 0) * threads
    return (per_edge + extra_edge) * edges + per_node * nodes


def check(
    algorithm: str,
    nodes: int,
    edges: int,
    limit_mb: int,
    *,
    adjacency_bytes: int = 0,
    threads: int = 1,
) -> None:
    need = estimate(algorithm, nodes, edges, threads) + adjacency_bytes
    if need > limit_mb * 2**20:
        raise AlgorithmMemoryError(
            f"{algorithm} on {nodes:,} nodes and {edges:,} edges needs about "
            f"{need / 2**20:,.0f} MB, more than the limit of {limit_mb:,} MB "
            f"(max_memory_mb; in the server, query_memory_mb); raise the limit or run it "
            "on a smaller edge type"
        )
