"""Graph algorithm libraries side by side on one adjacency (issue 28 item 4).

    .venv/bin/python bench/algo.py                          # 1M nodes, 10M edges
    .venv/bin/python bench/algo.py --nodes 100000 --edges 1000000
    .venv/bin/python bench/algo.py --libs igraph,networkit  # a subset
    .venv/bin/python bench/algo.py --steps convert,pagerank # the PageRank target only

A random directed graph (uniform endpoints: self-loops and multi-edges included, a random
float weight per edge) is built as a `graphlake.adjacency.Csr`, then each library, in its
own process so its peak RSS is its own, converts the Csr into its structure and runs
PageRank, weakly and strongly connected components, Louvain, Leiden (2 iterations), k-core
and weighted shortest paths from one source. The row "graphlake" is graphlake.algo (igraph
underneath; NetworKit's PageRank on one thread, and its PLM with refinement for Louvain on
the machine's threads) end to end: each step converts again and builds the Arrow answer;
"graphlake-1t" is its Louvain on one thread (the repeatable run). The "networkit" row's
Louvain is PLM without refinement on a graph from GraphFromCoo. Printed per
step: wall and CPU seconds (CPU time is what a busy machine does not inflate) and the
process's peak RSS. "-" means the library has no such algorithm (or none without a Python
callback per edge).

Target: PageRank on 1M nodes / 10M edges <= 10 s on the 2-core machine.

igraph (the `algo` extra) and scipy (dev) come with `make test`; the comparison libraries
do not: `.venv/bin/pip install networkit rustworkx` first, or pick `--libs` without them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from _util import cpu_seconds, load_average, machine, peak_rss_mib, render_table

LIBS = ("graphlake", "graphlake-1t", "igraph", "igraph-numpy", "networkit", "scipy", "rustworkx")
STEPS = ("convert", "pagerank", "wcc", "scc", "louvain", "leiden", "kcore", "sssp")


def make_csr(n: int, m: int, seed: int = 7) -> Any:
    """A Csr over keys n0000000.. (sorted as the integers are) with m uniform edges, with
    int32 node ids and edge rows as graphlake.adjacency builds them at this size."""
    import pyarrow as pa

    from graphlake.adjacency.csr import Csr, group_offsets

    rng = np.random.default_rng(seed)
    s = np.sort(rng.integers(0, n, m, dtype=np.int32))
    d = rng.integers(0, n, m, dtype=np.int32)
    keys = pa.array([f"n{i:08d}" for i in range(n)], pa.string())
    by_dst = np.argsort(d, kind="stable")
    return Csr(
        src_keys=keys,
        dst_keys=keys,
        edge_ids=pa.array(np.arange(m).astype(str)),
        out_offsets=group_offsets(s, n),
        out_targets=d,
        out_edges=np.arange(m, dtype=np.int32),
        in_offsets=group_offsets(d[by_dst], n),
        in_sources=s[by_dst],
        in_edges=by_dst.astype(np.int32),
    )


def _sources(csr: Any) -> np.ndarray:
    return np.repeat(np.arange(len(csr.out_offsets) - 1), np.diff(csr.out_offsets))


def run_igraph(
    csr: Any, weights: np.ndarray, numpy_pairs: bool = False
) -> dict[str, Callable[[], Any]]:
    """igraph fed as graphlake.algo feeds it (tuples of Python ints, a chunk at a time:
    nodes.edge_pairs), or, `numpy_pairs`, from one (m, 2) numpy array (the row
    "igraph-numpy": python-igraph reads it a row view and two numpy scalars at a time)."""
    import igraph as ig

    from graphlake.algo.nodes import edge_pairs

    g: dict[str, Any] = {}

    def convert() -> None:
        n = len(csr.src_keys)
        g["d"] = ig.Graph(n=n, directed=True)
        if numpy_pairs:
            g["d"].add_edges(np.column_stack([_sources(csr), csr.out_targets]))
        else:
            g["d"].add_edges(edge_pairs(csr))
        g["d"].es["w"] = weights

    def louvain() -> Any:
        u = g["d"].as_undirected(mode="each")
        return u.community_multilevel()

    def leiden() -> Any:
        u = g["d"].as_undirected(mode="each")
        return u.community_leiden(objective_function="modularity", n_iterations=2)

    def kcore() -> Any:
        u = g["d"].as_undirected(mode="collapse")
        return u.coreness()

    return {
        "convert": convert,
        "pagerank": lambda: g["d"].pagerank(damping=0.85),
        "wcc": lambda: g["d"].connected_components(mode="weak").membership,
        "scc": lambda: g["d"].connected_components(mode="strong").membership,
        "louvain": louvain,
        "leiden": leiden,
        "kcore": kcore,
        "sssp": lambda: g["d"].distances(source=0, weights="w", mode="out"),
    }


def run_networkit(csr: Any, weights: np.ndarray) -> dict[str, Callable[[], Any]]:
    import networkit as nk

    g: dict[str, Any] = {}
    n = len(csr.src_keys)

    def convert() -> None:
        # GraphFromCoo takes int64 ids only ("invalid input format" for int32 targets)
        coo = (weights, (_sources(csr), csr.out_targets.astype(np.int64)))
        g["d"] = nk.GraphFromCoo(coo, n=n, directed=True, weighted=True)

    def pagerank() -> Any:
        sinks = nk.centrality.SinkHandling.DistributeSinks
        pr = nk.centrality.PageRank(g["d"], damp=0.85, tol=1e-9, distributeSinks=sinks)
        pr.run()
        return pr.scores()

    def wcc() -> Any:
        c = nk.components.WeaklyConnectedComponents(g["d"])
        c.run()
        return c.getPartition()

    def scc() -> Any:
        c = nk.components.StronglyConnectedComponents(g["d"])
        c.run()
        return c.getPartition()

    def louvain() -> Any:
        u = nk.graphtools.toUndirected(g["d"])
        plm = nk.community.PLM(u, refine=False)
        plm.run()
        return plm.getPartition()

    def kcore() -> Any:
        u = nk.graphtools.toUndirected(g["d"])
        u.removeSelfLoops()
        u.removeMultiEdges()
        c = nk.centrality.CoreDecomposition(u)
        c.run()
        return c.scores()

    def sssp() -> Any:
        d = nk.distance.Dijkstra(g["d"], 0, storePaths=False)
        d.run()
        return d.getDistances()

    return {
        "convert": convert,
        "pagerank": pagerank,
        "wcc": wcc,
        "scc": scc,
        "louvain": louvain,
        "kcore": kcore,
        "sssp": sssp,
    }


def run_scipy(csr: Any, weights: np.ndarray) -> dict[str, Callable[[], Any]]:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components, dijkstra

    g: dict[str, Any] = {}
    n = len(csr.src_keys)

    def convert() -> None:
        # Multi-edges: csgraph keeps duplicate entries; dijkstra takes the smaller one.
        g["d"] = csr_matrix((weights, csr.out_targets, csr.out_offsets), shape=(n, n))

    return {
        "convert": convert,
        "wcc": lambda: connected_components(g["d"], directed=True, connection="weak"),
        "scc": lambda: connected_components(g["d"], directed=True, connection="strong"),
        "sssp": lambda: dijkstra(g["d"], directed=True, indices=0),
    }


def run_rustworkx(csr: Any, weights: np.ndarray) -> dict[str, Callable[[], Any]]:
    import rustworkx as rx

    g: dict[str, Any] = {}
    n = len(csr.src_keys)

    def convert() -> None:
        d = rx.PyDiGraph(multigraph=True)
        d.add_nodes_from(range(n))
        d.add_edges_from(
            zip(_sources(csr).tolist(), csr.out_targets.tolist(), weights.tolist(), strict=False)
        )
        g["d"] = d

    def kcore() -> Any:
        u = g["d"].to_undirected(multigraph=False)
        u.remove_edges_from([(a, a) for a, b in u.edge_list() if a == b])
        return rx.core_number(u)

    return {
        "convert": convert,
        "pagerank": lambda: rx.pagerank(g["d"], alpha=0.85),
        "wcc": lambda: rx.weakly_connected_components(g["d"]),
        "scc": lambda: rx.strongly_connected_components(g["d"]),
        "kcore": kcore,
    }


def run_graphlake(csr: Any, weights: np.ndarray) -> dict[str, Callable[[], Any]]:
    """graphlake.algo itself: each step converts the Csr again and builds the answer
    (an Arrow table by id), so it is what `g.algo` costs after reading the adjacency."""
    from graphlake.algo import algorithms as A

    first = csr.src_keys[0].as_py()
    return {
        "pagerank": lambda: A.pagerank(csr, max_memory_mb=64_000),
        "wcc": lambda: A.weakly_connected_components(csr, max_memory_mb=64_000),
        "scc": lambda: A.strongly_connected_components(csr, max_memory_mb=64_000),
        "louvain": lambda: A.louvain(csr, max_memory_mb=64_000),
        "leiden": lambda: A.leiden(csr, iterations=2, max_memory_mb=64_000),
        "kcore": lambda: A.kcore(csr, max_memory_mb=64_000),
        "sssp": lambda: A.shortest_paths(csr, first, weights, max_memory_mb=64_000),
    }


def run_graphlake_one_thread(csr: Any, weights: np.ndarray) -> dict[str, Callable[[], Any]]:
    """graphlake.algo.louvain on one thread: NetworKit's PLM is repeatable only there."""
    from graphlake.algo import algorithms as A

    return {"louvain": lambda: A.louvain(csr, threads=1, max_memory_mb=64_000)}


RUNNERS = {
    "graphlake": run_graphlake,
    "graphlake-1t": run_graphlake_one_thread,
    "igraph": run_igraph,
    "igraph-numpy": lambda csr, weights: run_igraph(csr, weights, numpy_pairs=True),
    "networkit": run_networkit,
    "scipy": run_scipy,
    "rustworkx": run_rustworkx,
}


def child(lib: str, n: int, m: int, wanted: list[str], out: Any) -> None:
    csr = make_csr(n, m)
    weights = np.random.default_rng(11).random(m) + 0.01
    steps = RUNNERS[lib](csr, weights)
    figures: dict[str, tuple[float, float, float]] = {}
    for name in STEPS:
        if name not in steps or name not in wanted:
            continue
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            steps[name]()
        except Exception as exc:  # reported in the table, the other steps still run
            print(f"  {lib} {name}: {type(exc).__name__}: {exc}", flush=True)
            continue
        figures[name] = (time.perf_counter() - t0, cpu_seconds() - c0, peak_rss_mib())
    out.put(json.dumps(figures))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--steps", default=",".join(STEPS), help="a subset, e.g. convert,pagerank")
    args = ap.parse_args()
    print(machine())
    print(f"{args.nodes:,} nodes, {args.edges:,} edges; load {load_average()} at start")
    ctx = multiprocessing.get_context("spawn")
    rows = []
    for lib in args.libs.split(","):
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(lib, args.nodes, args.edges, args.steps.split(","), q))
        p.start()
        figures = json.loads(q.get())
        p.join()
        cells = [
            f"{figures[s][0]:.1f} / {figures[s][1]:.1f} s / {figures[s][2]:,.0f}"
            if s in figures
            else "-"
            for s in STEPS
        ]
        rows.append([lib, *cells])
        print(f"  {lib} done (load {load_average()}): {' | '.join(cells)}", flush=True)
    print("wall / CPU seconds / peak RSS MiB of the library's process after the step")
    print(render_table(["library", *STEPS], rows))


if __name__ == "__main__":
    main()
