"""Cypher's `CALL` of graph algorithms (query/calls.py) on stored generated graphs: the
answers checked against networkx (an independent implementation) and against `g.algo`
on the same revision; YIELD, WHERE, ORDER BY, LIMIT, MATCH after CALL, parameters; the
bad-input rules (typed errors naming what there is, raised before anything runs); the
query's time and memory limits. LadybugDB's algo extension does not load without network
(INSTALL downloads it), so it is not compared here (docs/guides/algorithms.md)."""

from __future__ import annotations

import time

import networkx as nx
import numpy as np
import pytest

import graphlake as gl
from graphlake.algo import memory
from graphlake.errors import (
    AlgorithmError,
    AlgorithmMemoryError,
    CypherError,
    CypherNameError,
    CypherProcedureError,
    CypherSyntaxError,
    KeyNotFoundError,
    QueryTimeoutError,
    UnknownPropertyError,
)
from graphlake.query import calls
from graphlake.query.executor import run_query
from graphlake.read.sql import SqlLimits

SCHEMA = """
node Person { name: String @key  age: I32? }
node Post { slug: String @key }
edge Knows: Person -> Person { w: F64? }
edge Wrote: Person -> Post
"""
N = 60


def _store(root: str, seed: int) -> tuple[gl.Graph, list[tuple[str, str, float]]]:
    """Random Knows among the first 50 people (self-loops and repeats included; the rest
    isolated), a weight per edge; a few Wrote edges (bipartite); branch `dev` adds edges."""
    rng = np.random.default_rng(seed)
    people = [f"p{i:02d}" for i in range(N)]
    pairs = [(people[a], people[b]) for a, b in zip(*rng.integers(0, 50, (2, 150)), strict=True)]
    pairs += [("p03", "p03"), pairs[0]]
    edges = [(a, b, float(rng.random() * 4 + 0.1)) for a, b in pairs]
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert("Person", [{"name": p, "age": i} for i, p in enumerate(people)])
        w.insert("Post", [{"slug": s} for s in ("a", "b", "c")])
        w.insert(
            "Knows",
            [{"id": f"k{j:03d}", "src": a, "dst": b, "w": x} for j, (a, b, x) in enumerate(edges)],
        )
        w.insert("Wrote", [{"src": people[i], "dst": "abc"[i % 3]} for i in range(7)])
    g.create_branch("dev")
    with g.write("dev", message="more") as w:
        w.insert("Knows", [{"src": "p55", "dst": people[i], "w": 1.0} for i in range(4)])
    return g, edges


@pytest.fixture(scope="module", params=[1, 2])
def stored(request, tmp_path_factory) -> tuple[gl.Graph, nx.MultiDiGraph]:
    g, edges = _store(str(tmp_path_factory.mktemp("call") / "g"), request.param)
    oracle = nx.MultiDiGraph()
    oracle.add_nodes_from(f"p{i:02d}" for i in range(N))
    for a, b, w in edges:
        oracle.add_edge(a, b, weight=w)
    return g, oracle


def _by_name(g: gl.Graph, text: str, **kw) -> dict:
    return {r["name"]: r["value"] for r in g.query(text, **kw).to_pylist()}


def test_pagerank_equals_networkx(stored) -> None:
    g, oracle = stored
    got = _by_name(
        g,
        "CALL pagerank('Knows', {damping: 0.7}) YIELD node, rank "
        "RETURN node.name AS name, rank AS value",
    )
    want = nx.pagerank(oracle, alpha=0.7, weight=None, tol=1e-12, max_iter=1000)
    assert set(got) == set(want)
    assert max(abs(got[k] - want[k]) for k in want) < 1e-6


def test_components_and_kcore_equal_networkx(stored) -> None:
    g, oracle = stored

    def partition(name: str) -> set[frozenset[str]]:
        rows = g.query(
            f"CALL {name}('Knows') YIELD node, component RETURN node.name AS n, component"
        )
        groups: dict[int, set[str]] = {}
        for r in rows.to_pylist():
            groups.setdefault(r["component"], set()).add(r["n"])
        return {frozenset(x) for x in groups.values()}

    assert partition("wcc") == {frozenset(c) for c in nx.weakly_connected_components(oracle)}
    assert partition("strongly_connected_components") == {
        frozenset(c) for c in nx.strongly_connected_components(oracle)
    }
    simple = nx.Graph(oracle.to_undirected())
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    got = _by_name(
        g, "CALL kcore('Knows') YIELD node, core RETURN node.name AS name, core AS value"
    )
    assert got == nx.core_number(simple)


def test_weighted_shortest_paths_equal_networkx(stored) -> None:
    g, oracle = stored
    got = _by_name(
        g,
        "CALL shortest_paths('Knows', {source: $s, weight: 'w'}) YIELD node, distance "
        "RETURN node.name AS name, distance AS value",
        params={"s": "p00"},
    )
    want = nx.single_source_dijkstra_path_length(oracle, "p00", weight="weight")
    assert set(got) == set(want)
    assert max(abs(got[k] - want[k]) for k in want) < 1e-9


def test_every_algorithm_equals_g_algo_on_each_revision(stored) -> None:
    g, _ = stored
    for rev in ("main", "dev"):
        for name, method, options in (
            ("page_rank", g.algo.pagerank, {}),
            ("wcc", g.algo.weakly_connected_components, {}),
            ("scc", g.algo.strongly_connected_components, {}),
            ("louvain", g.algo.louvain, {"seed": 3, "threads": 1}),
            ("leiden", g.algo.leiden, {"seed": 3, "iterations": 5}),
            ("kcore", g.algo.kcore, {}),
        ):
            want = method("Knows", branch=rev, **options)
            column = want.column_names[-1]
            got = g.query(
                f"CALL {name}('Knows', $o) YIELD node, {column} "
                f"RETURN node.name AS id, {column} ORDER BY id",
                params={"o": options},
                branch=rev,
            )
            assert got.to_pylist() == want.to_pylist(), (rev, name)


def test_yield_where_order_limit_and_match_after_call(stored) -> None:
    g, oracle = stored
    ranks = g.algo.pagerank("Knows").to_pylist()
    top = sorted(ranks, key=lambda r: (-r["rank"], r["id"]))[:5]
    got = g.query(
        "CALL pagerank('Knows') YIELD node AS p, rank AS r WHERE r > $min "
        "RETURN p.name AS name, p.age AS age, r ORDER BY r DESC, name LIMIT 5",
        params={"min": 0.0},
    ).to_pylist()
    assert [x["name"] for x in got] == [t["id"] for t in top]
    assert [x["age"] for x in got] == [int(t["id"][1:]) for t in top]
    # A MATCH from the yielded node: the out-degree of each node of the largest core.
    got = g.query(
        "CALL kcore('Knows') YIELD node, core WITH node, core ORDER BY core DESC LIMIT 1 "
        "MATCH (node)-[:Knows]->(f) RETURN node.name AS name, count(f) AS out"
    ).to_pylist()
    assert got[0]["out"] == oracle.out_degree(got[0]["name"])
    # CALL after MATCH: the rows multiply (one person, every node's rank).
    got = g.query(
        "MATCH (a:Person {name: 'p01'}) CALL pagerank('Knows') YIELD rank "
        "RETURN a.name AS a, count(*) AS n, sum(rank) AS total"
    ).to_pylist()
    assert got[0]["a"] == "p01" and got[0]["n"] == N and abs(got[0]["total"] - 1) < 1e-9


def test_standalone_call_and_bipartite_nodes(stored) -> None:
    g, _ = stored
    table = g.query("CALL wcc('Knows')")
    assert table.column_names == ["node", "component"] and table.num_rows == N
    assert set(table.to_pylist()[0]["node"]) >= {"id", "name", "age"}
    # Wrote: Person -> Post is one bipartite graph; `node` is either type.
    got = g.query(
        "CALL pagerank('Wrote') YIELD node, rank WHERE 'Post' IN labels(node) "
        "RETURN node.slug AS slug, rank ORDER BY slug"
    ).to_pylist()
    want = {r["id"]: r["rank"] for r in g.algo.pagerank("Wrote").to_pylist() if r["type"] == "Post"}
    assert {x["slug"]: x["rank"] for x in got} == want


def test_explain_shows_the_call_step(stored) -> None:
    g, _ = stored
    plan = g.query("CALL pagerank('Knows') YIELD node, rank RETURN rank LIMIT 3", explain=True)
    ops = plan["operation"].to_pylist()
    assert any(o.startswith("CALL pagerank('Knows')") for o in ops)
    assert plan["rows"].to_pylist()[-1] == 3


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        (
            "CALL pagerak('Knows')",
            CypherProcedureError,
            "did you mean 'pagerank'? (known: pagerank",
        ),
        ("CALL db.labels()", CypherProcedureError, "unknown procedure 'db.labels'"),
        (
            "CALL pagerank('Knows', {damping: 1.5})",
            CypherProcedureError,
            "damping must be between 0 and 1",
        ),
        (
            "CALL pagerank('Knows', {damping: 0})",
            CypherProcedureError,
            "damping must be between 0 and 1",
        ),
        (
            "CALL leiden('Knows', {iterations: 5000})",
            CypherProcedureError,
            "iterations must be between 1 and 1000",
        ),
        (
            "CALL pagerank('Knows', {max_memory_mb: 9})",
            CypherProcedureError,
            "no parameter 'max_memory_mb'",
        ),
        (
            "CALL louvain('Knows', {resolution: -1})",
            CypherProcedureError,
            "resolution must be greater than 0",
        ),
        ("CALL shortest_paths('Knows')", CypherProcedureError, "needs 'source'"),
        (
            "CALL pagerank('Knows') YIELD score RETURN score",
            CypherProcedureError,
            "yields node and rank, not 'score'",
        ),
        ("CALL pagerank()", CypherProcedureError, "takes an edge type"),
        ("CALL pagerank('Knows', {}, 3)", CypherProcedureError, "takes an edge type"),
        ("CALL pagerank('Knows', 0.5)", CypherProcedureError, "a map of parameters"),
        ("CALL pagerank(3)", CypherProcedureError, "an edge type's name"),
        (
            "MATCH (a:Person) CALL pagerank(a.name) YIELD rank RETURN rank",
            CypherProcedureError,
            "a literal or a $parameter",
        ),
        ("CALL pagerank('Knws')", CypherNameError, "did you mean 'Knows'"),
        ("CALL pagerank('Person')", CypherNameError, "is a node label"),
        (
            "MATCH (node:Person) CALL pagerank('Knows') YIELD node RETURN node",
            CypherError,
            "'node' is already defined",
        ),
        ("CALL pagerank('Knows') YIELD rank RETURN node", CypherNameError, "'node' is not defined"),
        (
            "CALL pagerank('Knows') YIELD rank WHERE rank > 'x' RETURN rank",
            CypherError,
            "cannot compare",
        ),
        (
            "CALL { MATCH (n) RETURN n } RETURN 1",
            CypherSyntaxError,
            "line 1, column 1: CALL { ... } subqueries",
        ),
        ("CALL pagerank('Knows') YIELD rank AS", CypherSyntaxError, "expected a name"),
    ],
)
def test_bad_calls_are_typed_errors_and_nothing_runs(stored, monkeypatch, text, error, message):
    g, _ = stored

    def never(*_a, **_k):
        raise AssertionError("an algorithm ran")

    monkeypatch.setattr(calls, "run", never)
    with pytest.raises(error) as caught:
        g.query(text)
    assert message in str(caught.value)
    if error is CypherProcedureError:  # both families catch it
        assert isinstance(caught.value, AlgorithmError) and isinstance(caught.value, CypherError)


def test_run_time_errors_are_typed(stored) -> None:
    g, _ = stored
    with pytest.raises(KeyNotFoundError, match="source 'nobody'"):
        g.query("CALL shortest_paths('Knows', {source: 'nobody'}) YIELD node RETURN node")
    with pytest.raises(UnknownPropertyError, match="has no property 'km'"):
        g.query("CALL sssp('Knows', {source: 'p00', weight: 'km'})")


def test_memory_limit_refuses_before_running_and_timeout_stops(stored, monkeypatch) -> None:
    g, _ = stored
    snap = g.snapshot("main")
    text = "CALL pagerank('Knows') YIELD node, rank RETURN node.name, rank"
    assert run_query(snap, text, limits=SqlLimits(algo_memory_mb=64)).num_rows == N
    # The run's memory limit (the server's query_memory_mb, as for POST /algo): an estimate
    # past it refuses the whole query. DuckDB's memory_limit_mb is not the run's limit.
    monkeypatch.setattr(memory, "_BASE", (2**20, 0))  # 1 MiB per edge: ~150 MiB here
    with pytest.raises(AlgorithmMemoryError, match="more than the limit of 64 MB"):
        run_query(snap, text, limits=SqlLimits(algo_memory_mb=64, memory_limit_mb=1024))
    limits = SqlLimits(algo_memory_mb=1024, memory_limit_mb=64)
    assert run_query(snap, text, limits=limits).num_rows == N
    monkeypatch.undo()

    real = calls.run

    def slow(*a, **k):
        time.sleep(0.6)
        return real(*a, **k)

    monkeypatch.setattr(calls, "run", slow)
    with pytest.raises(QueryTimeoutError, match=r"timed out after 0\.3 s"):
        run_query(snap, text, timeout_s=0.3)
