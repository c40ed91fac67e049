"""Algorithms by name on a pinned snapshot: the one entry point of the Python API (via
`Graph.algo`), the CLI, the HTTP route and Cypher's `CALL`.

`run(snapshot, "pagerank", "Knows", damping=0.9)` checks the name, the parameters, the
edge type (and the weight property), estimates the memory from the tables' row counts,
then reads the adjacency (`graphlake.adjacency.adjacency`) and runs. Names are ours, with
LadybugDB's algo extension names as aliases (`page_rank`, `wcc`, `k_core_decomposition`...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphlake.adjacency.load import adjacency
from graphlake.algo import algorithms, memory, nkit, params
from graphlake.algo.weights import check_property, edge_weights
from graphlake.errors import AlgorithmError
from graphlake.schema.model import EdgeType

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


@dataclass(frozen=True)
class Algorithm:
    name: str
    column: str  # the value column of the answer
    function: Callable[..., pa.Table]
    params: dict[str, Any]  # name -> default (None: required or optional without default)
    summary: str
    aliases: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm(
            "pagerank",
            "rank",
            algorithms.pagerank,
            {"damping": 0.85},
            "PageRank of the directed graph (ranks sum to 1)",
            ("page_rank",),
        ),
        Algorithm(
            "wcc",
            "component",
            algorithms.weakly_connected_components,
            {},
            "weakly connected components (edges read as undirected)",
            ("weakly_connected_components",),
        ),
        Algorithm(
            "scc",
            "component",
            algorithms.strongly_connected_components,
            {},
            "strongly connected components of the directed graph",
            ("strongly_connected_components", "strongly_connected_components_kosaraju"),
        ),
        Algorithm(
            "louvain",
            "community",
            algorithms.louvain,
            {"resolution": 1.0, "seed": 0, "threads": None},
            "Louvain communities (modularity) of the undirected multigraph (NetworKit's PLM; "
            "repeatable with threads=1)",
        ),
        Algorithm(
            "leiden",
            "community",
            algorithms.leiden,
            {"resolution": 1.0, "iterations": 10, "seed": 0},
            "Leiden communities (modularity) of the undirected multigraph",
        ),
        Algorithm(
            "kcore",
            "core",
            algorithms.kcore,
            {},
            "core number of each node in the simple undirected graph",
            ("k_core_decomposition", "kcore_decomposition"),
        ),
        Algorithm(
            "shortest_paths",
            "distance",
            algorithms.shortest_paths,
            {"source": None, "weight": None},
            "distances along out-edges from `source`, summing `weight` (default 1 per edge)",
            ("sssp", "weighted_shortest_paths"),
            ("source",),
        ),
    )
}
_BY_ALIAS = {alias: a for a in ALGORITHMS.values() for alias in (a.name, *a.aliases)}


def lookup(name: str) -> Algorithm:
    found = _BY_ALIAS.get(name.lower()) if isinstance(name, str) else None
    if found is None:
        raise AlgorithmError(
            f"unknown algorithm {name!r} (known: {', '.join(ALGORITHMS)}; "
            f"also as {', '.join(sorted(set(_BY_ALIAS) - set(ALGORITHMS)))})"
        )
    return found


def run(
    snapshot: Snapshot,
    name: str,
    edge_type: str,
    *,
    max_memory_mb: int = params.MAX_MEMORY_MB,
    max_threads: int | None = None,
    **options: Any,
) -> pa.Table:
    """The answer of algorithm `name` on `edge_type` at `snapshot` (see algorithms.py).

    `max_threads` (the server's `algo_threads`; None: no cap) is the most threads the run
    may use: a `threads` above it is refused (`AlgorithmError`), and without `threads`
    Louvain then runs on one, its repeatable run (the cap's default, see `capped`)."""
    algo = lookup(name)
    options = capped(algo, options, max_threads)
    check_options(algo, options)
    limit = params.integer("max_memory_mb", max_memory_mb)
    if limit < 1:
        raise AlgorithmError(f"max_memory_mb must be at least 1, not {max_memory_mb!r}")
    edge = snapshot.type(edge_type, "edge")
    assert isinstance(edge, EdgeType)  # type(..., "edge") refuses a node type
    weight = options.pop("weight", None)
    if weight is not None:
        check_property(snapshot, edge_type, weight)
    _precheck(snapshot, edge, algo.name, limit)
    csr = adjacency(snapshot, edge_type)
    kwargs = {k: v for k, v in options.items() if v is not None}
    if algo.name == "shortest_paths":
        source = kwargs.pop("source")
        if not isinstance(source, str):
            source = str(source)
        w = None if weight is None else edge_weights(snapshot, edge_type, weight, csr)
        return algorithms.shortest_paths(
            csr, source, w, types=(edge.src, edge.dst), max_memory_mb=limit
        )
    return algo.function(csr, types=(edge.src, edge.dst), max_memory_mb=limit, **kwargs)


def capped(algo: Algorithm, options: Mapping[str, Any], max_threads: int | None) -> dict[str, Any]:
    """`options` under a thread cap: a `threads` above `max_threads` is refused, and an
    algorithm that takes `threads` gets 1 when none is given (repeatable: the pages of one
    answer, each a run of its own when the answer is not kept, must agree). PageRank and
    the igraph algorithms run on one thread whatever the cap. No cap: `options` as given."""
    out = dict(options)
    if max_threads is None:
        return out
    cap = params.integer("max_threads", max_threads)
    if cap < 1:
        raise AlgorithmError(f"max_threads must be at least 1, not {max_threads!r}")
    if "threads" not in algo.params:
        return out
    asked = out.get("threads")
    if asked is None:
        out["threads"] = 1
    elif nkit.threads(asked) > cap:
        raise AlgorithmError(
            f"threads must be at most {cap} here, not {asked!r} (the most threads one "
            "algorithm run may use: max_threads, the server's limit algo_threads)"
        )
    return out


def check_options(algo: Algorithm, options: Mapping[str, Any]) -> None:
    """Raise `AlgorithmError` unless `options` are parameters `algo` takes, with values
    in range and the required ones given (before anything is read; Cypher's CALL checks
    them while planning)."""
    unknown = sorted(set(options) - set(algo.params))
    if unknown:
        allowed = ", ".join(algo.params) or "none"
        raise AlgorithmError(
            f"{algo.name} has no parameter {unknown[0]!r} (its parameters: {allowed})"
        )
    missing = [p for p in algo.required if options.get(p) is None]
    if missing:
        raise AlgorithmError(f"{algo.name} needs {missing[0]!r}")
    _validate(options)


def _validate(options: Mapping[str, Any]) -> None:
    """The parameter checks, before the adjacency is read (the functions check again)."""
    checks: dict[str, Callable[[str, Any], Any]] = {
        "damping": params.unit_open,
        "resolution": params.positive,
        "iterations": params.iterations,
        "seed": lambda _n, v: params.seed(v),
        "threads": lambda _n, v: nkit.threads(v),
    }
    for key, value in options.items():
        if value is not None and key in checks:
            checks[key](key, value)


def _precheck(snapshot: Snapshot, edge: EdgeType, name: str, limit_mb: int) -> None:
    """Refuse by the row counts before reading: the adjacency (about 56 bytes per edge)
    plus the algorithm's own estimate must fit the limit."""
    edges = snapshot.dataset(edge.name).count_rows()
    nodes = snapshot.dataset(edge.src).count_rows()
    if edge.dst != edge.src:
        nodes += snapshot.dataset(edge.dst).count_rows()
    memory.check(name, nodes, edges, limit_mb, adjacency_bytes=56 * edges + 16 * nodes)
