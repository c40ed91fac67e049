"""Louvain communities by NetworKit's PLM (parallel Louvain method, Staudt & Meyerhenke),
with its refinement phase: bench/algo.py measured it tens of times faster than igraph's
`community_multilevel` at the same modularity (docs/performance.md), and refinement
raises the modularity it reaches (0.16 -> 0.21 on a uniform random graph of 100k nodes).

The graph handed to NetworKit is undirected and unweighted (nkit.graph: a parallel
edge adds weight, a self-loop counts once in the adjacency, as in igraph).

Threads: `threads` (nkit.threads). On one thread PLM visits nodes in id order and the
answer is repeatable (the same graph gives the same partition); on more, nodes move
concurrently and two runs may give different partitions of about the same modularity.
PLM draws no random numbers in these modes: `seed` seeds NetworKit's generator all the
same. NetworKit's thread count and generator are process-wide: a run holds them
(nkit.running).
"""

from __future__ import annotations

import numpy as np

from graphlake.adjacency.csr import Csr
from graphlake.algo import nkit
from graphlake.algo.nodes import node_count


def communities(csr: Csr, *, resolution: float, seed: int, threads: int) -> np.ndarray:
    """Each node's community label (dense id order, labels as PLM numbers them)."""
    nk = nkit.networkit("Louvain")
    if node_count(csr) == 0:
        return np.zeros(0, np.int64)
    with nkit.running(nk, threads):
        nk.engineering.setSeed(seed, False)
        g = nkit.graph(nk, csr, directed=False)
        plm = nk.community.PLM(
            g, refine=True, gamma=resolution, par="none" if threads == 1 else "balanced"
        )
        plm.run()
        # getPartition swaps the result out of `plm`: call it once only
        return np.asarray(plm.getPartition().getVector(), np.int64)
