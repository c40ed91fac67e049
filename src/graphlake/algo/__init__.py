"""Graph algorithms on the adjacency of one edge type at one pinned revision.

`algorithms` holds the pure functions on a `Csr` (PageRank, weakly and strongly connected
components, Louvain and Leiden communities, k-core, weighted shortest paths), each
returning an Arrow table of node `id` and its value; `run` reads the adjacency (and a
weight column) from a snapshot and dispatches by name, for the Python API, the CLI, the
HTTP route and Cypher's `CALL`. igraph does the computing, NetworKit PageRank and
Louvain (bench/algo.py: chosen by measurement); they are imported only when an algorithm
runs.
"""

# Every name `run.lookup` accepts (ours, then LadybugDB's): the server's body gate reads
# it without importing the algorithms (tests/algo checks it against run.ALGORITHMS).
NAMES = (
    "pagerank",
    "wcc",
    "scc",
    "louvain",
    "leiden",
    "kcore",
    "shortest_paths",
    "page_rank",
    "weakly_connected_components",
    "strongly_connected_components",
    "strongly_connected_components_kosaraju",
    "k_core_decomposition",
    "kcore_decomposition",
    "sssp",
    "weighted_shortest_paths",
)
