"""`g.algo` on a stored graph at any revision, the weights read from the edge table and
aligned by edge id, the bad-input rules (typed errors, nothing runs) and the CLI."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import graphlake as gl
from graphlake.adjacency.load import adjacency
from graphlake.algo import algorithms as A
from graphlake.errors import (
    AlgorithmError,
    AlgorithmMemoryError,
    KeyNotFoundError,
    UnknownPropertyError,
    UnknownTableError,
)
from tests.cli.helpers import error, parsed, run_all, stdout

SCHEMA = """
node Person { name: String @key }
node Post { slug: String @key }
edge Knows: Person -> Person { w: F64?  hops: I32?  note: String? }
edge Wrote: Person -> Post
"""
PEOPLE = [f"p{i:02d}" for i in range(40)]


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> gl.Graph:
    """main: 40 people, random weighted Knows (self-loops, repeats), a bipartite Wrote
    whose Post keys repeat Person keys; dev: more Knows edges; one Knows row without w
    only on the branch "gap"."""
    g = gl.Graph.init(str(tmp_path_factory.mktemp("algo") / "g"), SCHEMA)
    rng = np.random.default_rng(3)
    pairs = [
        (PEOPLE[a], PEOPLE[b])
        for a, b in zip(rng.integers(0, 35, 90), rng.integers(0, 35, 90), strict=True)
    ]
    pairs += [("p01", "p01"), pairs[0], pairs[1]]
    knows = [
        {"id": f"k{j:03d}", "src": a, "dst": b, "w": float(rng.random() * 5), "hops": 1}
        for j, (a, b) in enumerate(pairs)
    ]
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": p} for p in PEOPLE])
        w.insert("Post", [{"slug": p} for p in PEOPLE[:10]])
        w.insert("Knows", knows)
        w.insert(
            "Wrote", [{"id": f"w{i}", "src": PEOPLE[i], "dst": PEOPLE[i % 4]} for i in range(8)]
        )
    g.create_branch("dev")
    with g.write("dev", message="more") as w:
        w.insert(
            "Knows", [{"id": f"x{i}", "src": "p36", "dst": PEOPLE[i], "w": 1.0} for i in range(5)]
        )
    g.create_branch("gap")
    with g.write("gap", message="no weight") as w:
        w.insert("Knows", [{"id": "z", "src": "p00", "dst": "p39"}])
    return g


def test_api_equals_the_pure_function_at_each_revision(g: gl.Graph) -> None:
    for rev in ("main", "dev", "main~0"):
        csr = adjacency(g.snapshot(rev), "Knows")
        assert g.algo.pagerank("Knows", branch=rev, damping=0.7).equals(
            A.pagerank(csr, damping=0.7)
        )
        assert g.algo.kcore("Knows", branch=rev).equals(A.kcore(csr))
    main = g.algo.weakly_connected_components("Knows")
    dev = g.algo.weakly_connected_components("Knows", branch="dev")
    assert main.column_names == ["id", "component"] and main.num_rows == 40
    # dev joins p36 to the rest: one fewer component there.
    assert len(set(dev["component"].to_pylist())) == len(set(main["component"].to_pylist())) - 1
    assert g.algo.run("page_rank", "Knows").equals(g.algo.pagerank("Knows"))  # LadybugDB name


def test_weighted_shortest_paths_read_weights_by_edge_id(g: gl.Graph) -> None:
    rows = g.edges("Knows").to_pylist()
    nxg = nx.MultiDiGraph()
    nxg.add_nodes_from(PEOPLE)
    for r in rows:
        nxg.add_edge(r["src"], r["dst"], weight=r["w"])
    got = g.algo.shortest_paths("Knows", "p00", weight="w")
    want = nx.single_source_dijkstra_path_length(nxg, "p00", weight="weight")
    dist = dict(zip(got["id"].to_pylist(), got["distance"].to_pylist(), strict=True))
    assert dist.keys() == want.keys() and len(dist) > 10
    assert max(abs(dist[k] - want[k]) for k in want) < 1e-9
    ints = g.algo.shortest_paths("Knows", "p00", weight="hops")  # an integer property
    hops = nx.single_source_shortest_path_length(nxg, "p00")
    assert dict(zip(ints["id"].to_pylist(), ints["distance"].to_pylist(), strict=True)) == {
        k: float(v) for k, v in hops.items()
    }


def test_bipartite_edge_type_answers_with_types(g: gl.Graph) -> None:
    t = g.algo.weakly_connected_components("Wrote")
    assert t.column_names == ["type", "id", "component"]
    assert t.num_rows == 50  # 40 people and 10 posts, keys shared between the two types
    d = g.algo.shortest_paths("Wrote", "p05")
    assert d.to_pylist() == [
        {"type": "Person", "id": "p05", "distance": 0.0},
        {"type": "Post", "id": "p01", "distance": 1.0},
    ]


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda g: g.algo.pagerank("Nope"), UnknownTableError, "Nope"),
        (lambda g: g.algo.pagerank("Person"), UnknownTableError, "edge type"),
        (lambda g: g.algo.pagerank("Knows", damping=1.5), AlgorithmError, "damping"),
        (lambda g: g.algo.leiden("Knows", iterations=5000), AlgorithmError, "iterations"),
        (lambda g: g.algo.run("pagerank", "Knows", iterations=3), AlgorithmError, "no parameter"),
        (lambda g: g.algo.run("betweenness", "Knows"), AlgorithmError, "known: pagerank"),
        (lambda g: g.algo.run("shortest_paths", "Knows"), AlgorithmError, "source"),
        (lambda g: g.algo.shortest_paths("Knows", "nobody"), KeyNotFoundError, "nobody"),
        (
            lambda g: g.algo.shortest_paths("Knows", "p00", weight="x"),
            UnknownPropertyError,
            "w, hops",
        ),
        (
            lambda g: g.algo.shortest_paths("Knows", "p00", weight="note"),
            AlgorithmError,
            "not a number",
        ),
        (
            lambda g: g.algo.shortest_paths("Knows", "p00", "gap", weight="w"),
            AlgorithmError,
            "null",
        ),
        (lambda g: g.algo.pagerank("Knows", max_memory_mb=0), AlgorithmError, "max_memory_mb"),
        (lambda g: g.algo.louvain("Knows", max_memory_mb=True), AlgorithmError, "max_memory_mb"),
    ],
)
def test_bad_input_is_a_typed_error(g: gl.Graph, call, error: type, needle: str) -> None:
    head = g.head().id
    with pytest.raises(error, match=needle):
        call(g)
    assert g.head().id == head


def test_past_the_memory_limit_nothing_runs(g: gl.Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphlake.algo.run as run_module

    read: list = []
    monkeypatch.setattr(run_module, "adjacency", lambda *a: read.append(a))
    monkeypatch.setattr(run_module.memory, "_BASE", (2**20, 0))  # 1 MB per edge
    with pytest.raises(AlgorithmMemoryError, match="more than the limit of 50 MB"):
        g.algo.pagerank("Knows", branch="dev", max_memory_mb=50)  # 98 edges: ~98 MB
    assert read == []  # refused from the row counts: the adjacency was never read


def test_cli(g: gl.Graph) -> None:
    as_json, table, bad = run_all(
        ("algo", g.uri, "pagerank", "Knows", "--damping", "0.7", "--json"),
        ("algo", g.uri, "wcc", "Knows", "-b", "dev", "--limit", "3"),
        ("algo", g.uri, "pagerank", "Knows", "--damping", "2"),
    )
    rows = parsed(as_json)
    want = g.algo.pagerank("Knows", damping=0.7).to_pylist()
    assert [r["id"] for r in rows] == [r["id"] for r in want]
    assert max(abs(a["rank"] - b["rank"]) for a, b in zip(rows, want, strict=True)) < 1e-12
    out = stdout(table)
    assert "component" in out and "40 rows @ dev (first 3 of 40" in out
    assert "damping" in error(bad)


def test_names_the_server_knows_are_the_registry_s() -> None:
    from graphlake.algo import NAMES
    from graphlake.algo.run import _BY_ALIAS

    assert set(NAMES) == set(_BY_ALIAS)
