"""Graph algorithms on the adjacency of one edge type at one pinned revision.

`algorithms` holds the pure functions on a `Csr` (PageRank, weakly and strongly connected
components, Louvain and Leiden communities, k-core, weighted shortest paths), each
returning an Arrow table of node `id` and its value; `run` reads the adjacency (and a
weight column) from a snapshot and dispatches by name, for the Python API, the CLI, the
HTTP route and Cypher's `CALL`. igraph does the computing (bench/algo.py: chosen by
measurement); it is imported only when an algorithm runs.
"""
