"""graphlake.algo on generated graphs, checked against networkx (an independent
implementation): PageRank values within a tolerance, components as partitions, k-core
numbers exactly, shortest distances within a tolerance, Louvain and Leiden by the
modularity networkx computes for their partitions (seeded: both are randomized).
LadybugDB's algo extension does not load without network (INSTALL downloads it), so it
is not compared here (docs/guides/algorithms.md)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pyarrow as pa
import pytest

from graphlake.adjacency.csr import Csr, from_edges
from graphlake.algo import algorithms as A
from graphlake.algo import nodes
from graphlake.errors import AlgorithmError, AlgorithmMemoryError, KeyNotFoundError


def _keys(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i:04d}" for i in range(n)]


def random_graph(seed: int, n: int = 300, m: int = 700) -> tuple[Csr, list[tuple[str, str, str]]]:
    """Random directed edges among the first 80% of the nodes (the rest are isolated),
    plus self-loops, doubled edges and a separate small cycle: several components."""
    rng = np.random.default_rng(seed)
    nodes = _keys("n", n)
    live = int(n * 0.8)
    s = rng.integers(0, live, m)
    d = rng.integers(0, live, m)
    pairs = [(nodes[a], nodes[b]) for a, b in zip(s, d, strict=True)]
    pairs += [(nodes[i], nodes[i]) for i in rng.integers(0, live, 10)]  # self-loops
    pairs += pairs[:25]  # multi-edges
    pairs += [(nodes[live], nodes[live + 1]), (nodes[live + 1], nodes[live + 2])]
    pairs += [(nodes[live + 2], nodes[live])]  # a 3-cycle of its own
    edges = [(a, b, f"e{j:05d}") for j, (a, b) in enumerate(pairs)]
    return _csr(nodes, None, edges), edges


def _csr(src: list[str], dst: list[str] | None, edges: list[tuple[str, str, str]]) -> Csr:
    return from_edges(
        pa.array(src),
        None if dst is None else pa.array(dst),
        pa.array([e[0] for e in edges]),
        pa.array([e[1] for e in edges]),
        pa.array([e[2] for e in edges]),
    )


def nx_multi(csr: Csr, edges: list[tuple[str, str, str]], weights=None) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph()
    g.add_nodes_from(csr.src_keys.to_pylist())
    for j, (a, b, _) in enumerate(edges):
        g.add_edge(a, b, weight=1.0 if weights is None else weights[j])
    return g


def nx_undirected(g: nx.MultiDiGraph) -> nx.Graph:
    """The undirected multigraph as a weighted simple graph (multiplicity = weight)."""
    u = nx.Graph()
    u.add_nodes_from(g)
    for a, b in g.edges():
        w = u.get_edge_data(a, b, {"weight": 0})["weight"]
        u.add_edge(a, b, weight=w + 1)
    return u


def partition(table: pa.Table, column: str) -> set[frozenset[str]]:
    groups: dict[int, set[str]] = {}
    for key, label in zip(table["id"].to_pylist(), table[column].to_pylist(), strict=True):
        groups.setdefault(label, set()).add(key)
    return {frozenset(g) for g in groups.values()}


SEEDS = [1, 2, 3]


def test_pagerank_that_does_not_converge_within_the_cap_is_refused(monkeypatch) -> None:
    csr, _ = random_graph(1)
    monkeypatch.setattr(A, "PAGERANK_MAX_ITERATIONS", 3)  # about 20 are needed here
    with pytest.raises(AlgorithmError, match="did not converge within 3 iterations"):
        A.pagerank(csr)
    monkeypatch.undo()
    assert A.pagerank(csr).num_rows == nodes.node_count(csr)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("damping", [0.85, 0.5])
def test_pagerank_matches_networkx(seed: int, damping: float) -> None:
    csr, edges = random_graph(seed)
    got = A.pagerank(csr, damping=damping)
    assert got.column_names == ["id", "rank"]
    assert got["id"].to_pylist() == sorted(got["id"].to_pylist())
    want = nx.pagerank(nx_multi(csr, edges), alpha=damping, tol=1e-12, max_iter=10_000)
    ranks = dict(zip(got["id"].to_pylist(), got["rank"].to_pylist(), strict=True))
    assert ranks.keys() == want.keys()
    assert max(abs(ranks[k] - want[k]) for k in want) < 1e-6
    assert abs(sum(ranks.values()) - 1) < 1e-9
    assert A.pagerank(csr, damping=damping).equals(got)  # repeatable, to the last bit


@pytest.mark.parametrize("seed", SEEDS)
def test_components_match_networkx_as_partitions(seed: int) -> None:
    csr, edges = random_graph(seed, m=250)  # sparse: many components
    g = nx_multi(csr, edges)
    wcc = A.weakly_connected_components(csr)
    scc = A.strongly_connected_components(csr)
    assert partition(wcc, "component") == {frozenset(c) for c in nx.weakly_connected_components(g)}
    assert partition(scc, "component") == {
        frozenset(c) for c in nx.strongly_connected_components(g)
    }
    assert len(partition(wcc, "component")) > 3
    # Labels are numbered by each component's smallest id: the first row is 0, and
    # each new label is the next integer.
    seen: list[int] = []
    for label in wcc["component"].to_pylist():
        if label not in seen:
            assert label == len(seen)
            seen.append(label)


@pytest.mark.parametrize("seed", SEEDS)
def test_kcore_matches_networkx(seed: int) -> None:
    csr, edges = random_graph(seed, m=1200)
    simple = nx.Graph(nx_multi(csr, edges).to_undirected())
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    got = A.kcore(csr)
    assert dict(zip(got["id"].to_pylist(), got["core"].to_pylist(), strict=True)) == (
        nx.core_number(simple)
    )
    assert max(got["core"].to_pylist()) >= 3


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_shortest_paths_match_networkx(seed: int) -> None:
    csr, edges = random_graph(seed)
    rng = np.random.default_rng(seed + 100)
    by_edge = {e[2]: float(w) for e, w in zip(edges, rng.random(len(edges)) * 10, strict=True)}
    weights = np.array([by_edge[i] for i in csr.edge_ids.to_pylist()])  # by edge row
    source = edges[0][0]
    got = A.shortest_paths(csr, source, weights)
    g = nx_multi(csr, edges, [by_edge[e[2]] for e in edges])
    want = nx.single_source_dijkstra_path_length(g, source, weight="weight")
    dist = dict(zip(got["id"].to_pylist(), got["distance"].to_pylist(), strict=True))
    assert dist.keys() == want.keys()  # only the nodes reached
    assert max(abs(dist[k] - want[k]) for k in want) < 1e-9
    hops = A.shortest_paths(csr, source)  # no weights: each edge counts 1
    assert dict(zip(hops["id"].to_pylist(), hops["distance"].to_pylist(), strict=True)) == {
        k: float(v) for k, v in nx.single_source_shortest_path_length(g, source).items()
    }


def planted(seed: int) -> tuple[Csr, list[tuple[str, str, str]]]:
    """Six dense groups of 30 nodes, sparsely linked, plus isolated nodes and self-loops."""
    g = nx.planted_partition_graph(6, 30, 0.3, 0.01, seed=seed, directed=True)
    nodes = _keys("p", 190)
    pairs = [(nodes[a], nodes[b]) for a, b in g.edges()]
    pairs += [(nodes[3], nodes[3]), (nodes[40], nodes[40]), *pairs[:10]]
    edges = [(a, b, f"e{j:05d}") for j, (a, b) in enumerate(pairs)]
    return _csr(nodes, None, edges), edges


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["louvain", "leiden"])
def test_communities_reach_networkx_modularity(seed: int, method: str) -> None:
    csr, edges = planted(seed)
    u = nx_undirected(nx_multi(csr, edges))
    one = {"threads": 1} if method == "louvain" else {}  # PLM: repeatable on one thread
    got = getattr(A, method)(csr, seed=seed, **one)
    ours = nx.community.modularity(u, partition(got, "community"), weight="weight")
    theirs = nx.community.modularity(
        u, nx.community.louvain_communities(u, weight="weight", seed=seed), weight="weight"
    )
    assert ours >= theirs - 0.01
    assert ours > 0.5  # six planted groups are found
    assert getattr(A, method)(csr, seed=seed, **one).equals(got)  # repeatable


def planted_large(seed: int, groups: int, size: int) -> tuple[Csr, list[tuple[str, str, str]]]:
    """`groups` planted groups of `size` nodes (about 8 edges a node inside, 1 across),
    keys shuffled so that a group's nodes are not neighbours in id order."""
    n = groups * size
    g = nx.planted_partition_graph(groups, size, 8 / size, 1 / n, seed=seed, directed=True)
    order = np.random.default_rng(seed).permutation(n)
    nodes = _keys("q", n)
    pairs = [(nodes[order[a]], nodes[order[b]]) for a, b in g.edges()]
    edges = [(a, b, f"e{j:06d}") for j, (a, b) in enumerate(pairs)]
    return _csr(nodes, None, edges), edges


@pytest.mark.parametrize(("seed", "groups", "size", "threads"), [(1, 40, 50, 1), (2, 25, 120, 2)])
def test_louvain_reaches_networkx_modularity_on_planted_communities(
    seed: int, groups: int, size: int, threads: int
) -> None:
    """NetworKit's PLM against networkx's louvain_communities, by the modularity networkx
    computes for each partition, on thousands of nodes, on one thread and on two."""
    csr, edges = planted_large(seed, groups, size)
    u = nx_undirected(nx_multi(csr, edges))
    got = A.louvain(csr, threads=threads)
    assert got.column_names == ["id", "community"]
    assert got["id"].to_pylist() == sorted(u)
    ours = nx.community.modularity(u, partition(got, "community"), weight="weight")
    theirs = nx.community.modularity(
        u, nx.community.louvain_communities(u, weight="weight", seed=seed), weight="weight"
    )
    assert abs(ours - theirs) < 0.02, (ours, theirs)
    assert ours > 0.7
    assert groups - 5 <= len(partition(got, "community")) <= groups + 5
    coarse = A.louvain(csr, threads=threads, resolution=0.05)  # fewer, larger communities
    assert len(partition(coarse, "community")) < len(partition(got, "community"))


def test_louvain_on_one_thread_is_repeatable_and_labels_by_first_node() -> None:
    csr, _ = planted_large(3, 20, 40)
    got = A.louvain(csr, threads=1)
    assert A.louvain(csr, threads=1).equals(got)
    seen: list[int] = []
    for label in got["community"].to_pylist():
        if label not in seen:
            assert label == len(seen)
            seen.append(label)


def test_louvain_on_a_bipartite_type_matches_networkx_modularity() -> None:
    people, posts = _keys("x", 200), _keys("x", 100)  # the same keys in two types
    rng = np.random.default_rng(9)
    group = rng.integers(0, 5, 300)  # people 0..199, posts 200..299
    pairs = []
    for a in range(200):
        mates = np.flatnonzero(group[200:] == group[a])
        for b in rng.choice(mates, 4):
            pairs.append((a, int(b)))
        pairs.append((a, int(rng.integers(0, 100))))
    edges = [(people[a], posts[b], f"w{j}") for j, (a, b) in enumerate(pairs)]
    csr = _csr(people, posts, edges)
    got = A.louvain(csr, threads=1, types=("Person", "Post"))
    assert got.column_names == ["type", "id", "community"]
    assert len(got) == 300
    u = nx.Graph()
    u.add_nodes_from([("Person", k) for k in people] + [("Post", k) for k in posts])
    for a, b in pairs:
        w = u.get_edge_data(("Person", people[a]), ("Post", posts[b]), {"weight": 0})["weight"]
        u.add_edge(("Person", people[a]), ("Post", posts[b]), weight=w + 1)
    groups: dict[int, set] = {}
    for t, k, c in zip(*(got[c].to_pylist() for c in got.column_names), strict=True):
        groups.setdefault(c, set()).add((t, k))
    ours = nx.community.modularity(u, list(groups.values()), weight="weight")
    theirs = nx.community.modularity(
        u, nx.community.louvain_communities(u, weight="weight", seed=1), weight="weight"
    )
    assert ours >= theirs - 0.02


def test_bipartite_is_one_graph_over_both_node_sets() -> None:
    people, posts = _keys("x", 30), _keys("x", 20)  # the same keys in two types
    rng = np.random.default_rng(5)
    edges = [
        (people[a], posts[b], f"w{j}")
        for j, (a, b) in enumerate(
            zip(rng.integers(0, 25, 40), rng.integers(0, 18, 40), strict=False)
        )
    ]
    csr = _csr(people, posts, edges)
    g = nx.MultiDiGraph()
    g.add_nodes_from(("Person", k) for k in people)
    g.add_nodes_from(("Post", k) for k in posts)
    g.add_edges_from((("Person", a), ("Post", b)) for a, b, _ in edges)
    types = ("Person", "Post")
    wcc = A.weakly_connected_components(csr, types=types)
    assert wcc.column_names == ["type", "id", "component"]
    assert len(wcc) == 50
    rows = list(zip(wcc["type"].to_pylist(), wcc["id"].to_pylist(), strict=True))
    assert rows == sorted(rows)
    groups: dict[int, set] = {}
    for node, label in zip(rows, wcc["component"].to_pylist(), strict=True):
        groups.setdefault(label, set()).add(node)
    assert {frozenset(v) for v in groups.values()} == {
        frozenset(c) for c in nx.weakly_connected_components(g)
    }
    pr = A.pagerank(csr, types=types)
    want = nx.pagerank(g, tol=1e-12, max_iter=10_000)
    for t, k, r in zip(
        pr["type"].to_pylist(), pr["id"].to_pylist(), pr["rank"].to_pylist(), strict=False
    ):
        assert abs(r - want[(t, k)]) < 1e-6
    core = A.kcore(csr, types=types)
    simple = nx.Graph(g.to_undirected())
    assert dict(zip(rows, core["core"].to_pylist(), strict=True)) == nx.core_number(simple)
    far = A.shortest_paths(csr, edges[0][0], types=types)  # a Person key
    assert set(far["type"].to_pylist()) <= {"Person", "Post"}
    assert far["distance"].to_pylist()[0] == 0.0
    assert A.strongly_connected_components(csr, types=types)["component"].to_pylist() == list(
        range(50)
    )


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_edges_reach_igraph_whole_across_chunks(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """igraph is fed a chunk of edges at a time (nodes.PAIR_CHUNK): every chunk size gives
    the CSR's edges, in the union node space of a bipartite type too."""
    csr, edges = random_graph(4, n=40, m=90)
    whole = A.kcore(csr)  # one chunk
    monkeypatch.setattr(nodes, "PAIR_CHUNK", chunk)
    want = [
        (csr.src_keys.to_pylist().index(a), csr.src_keys.to_pylist().index(b)) for a, b, _ in edges
    ]
    assert sorted(nodes.edge_pairs(csr)) == sorted(want)
    assert A.kcore(csr).equals(whole)
    people, posts = _keys("x", 5), _keys("y", 4)
    bip = _csr(people, posts, [(people[i], posts[i % 4], f"w{i}") for i in range(5)])
    assert list(nodes.edge_pairs(bip)) == [(i, 5 + i % 4) for i in range(5)]


def test_empty_graph_answers_empty_tables() -> None:
    csr = _csr([], None, [])
    for f in (A.pagerank, A.weakly_connected_components, A.kcore, A.louvain, A.leiden):
        assert f(csr).num_rows == 0


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda c: A.pagerank(c, damping=1.0), "damping"),
        (lambda c: A.pagerank(c, damping=0), "damping"),
        (lambda c: A.pagerank(c, damping="x"), "damping"),
        (lambda c: A.leiden(c, iterations=10**6), "iterations"),
        (lambda c: A.leiden(c, iterations=0), "iterations"),
        (lambda c: A.louvain(c, resolution=0), "resolution"),
        (lambda c: A.louvain(c, seed=-1), "seed"),
        (lambda c: A.louvain(c, threads=0), "threads"),
        (lambda c: A.louvain(c, threads=2.0), "threads"),
        (lambda c: A.louvain(c, threads=True), "threads"),
        (lambda c: A.shortest_paths(c, "n0000", np.full(c.edge_count, -1.0)), "negative"),
        (lambda c: A.shortest_paths(c, "n0000", np.full(c.edge_count, np.nan)), "finite"),
        (lambda c: A.shortest_paths(c, "n0000", np.ones(3)), "weights"),
    ],
)
def test_bad_parameters_are_typed_errors(call, needle: str) -> None:
    csr, _ = random_graph(1, n=20, m=40)
    with pytest.raises(AlgorithmError, match=needle):
        call(csr)


def test_unknown_source_and_memory_limit() -> None:
    csr, _ = random_graph(1, n=20, m=40)
    with pytest.raises(KeyNotFoundError, match="nope"):
        A.shortest_paths(csr, "nope")
    with pytest.raises(AlgorithmMemoryError, match="max_memory_mb"):
        A.pagerank(random_graph(1, n=3000, m=20_000)[0], max_memory_mb=1)
    with pytest.raises(AlgorithmMemoryError, match="louvain"):
        A.louvain(random_graph(1, n=3000, m=20_000)[0], max_memory_mb=1)


def test_without_igraph_a_run_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphlake.errors import MissingExtraError

    monkeypatch.setitem(__import__("sys").modules, "igraph", None)  # import fails
    with pytest.raises(MissingExtraError, match=r"graphlake\[algo\]"):
        A.kcore(random_graph(1, n=20, m=40)[0])


def test_without_networkit_louvain_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphlake.errors import MissingExtraError

    monkeypatch.setitem(__import__("sys").modules, "networkit", None)  # import fails
    with pytest.raises(MissingExtraError, match=r"networkit.*graphlake\[algo\]"):
        A.louvain(random_graph(1, n=20, m=40)[0])
    with pytest.raises(MissingExtraError, match=r"pagerank needs networkit.*graphlake\[algo\]"):
        A.pagerank(random_graph(1, n=20, m=40)[0])


def test_louvain_threads_default_to_the_setting_then_the_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    from graphlake.algo import nkit

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert nkit.threads(None) == 3
    assert nkit.threads(5) == 5
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert nkit.threads(None) == len(os.sched_getaffinity(0))
    csr, _ = random_graph(2, n=60, m=150)
    before = __import__("networkit").getMaxNumberOfThreads()
    A.louvain(csr, threads=1)
    A.pagerank(csr)  # on one thread
    assert __import__("networkit").getMaxNumberOfThreads() == before  # put back
