"""The adjacency cache: keyed by exact table states, LRU within its byte budget,
thread-safe, and a size check against a query's memory limit."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.adjacency import cache as cache_mod
from graphlake.adjacency.cache import CACHE, AdjacencyCache
from graphlake.adjacency.csr import from_edges
from graphlake.adjacency.load import adjacency
from graphlake.errors import QueryTooLargeError

SCHEMA = """
node P { name: String @key }
node C { name: String @key }
edge K: P -> P
edge W: P -> C
"""


@pytest.fixture
def g(tmp_path):
    g = gl.Graph.init(str(tmp_path / "g"), SCHEMA)
    with g.write(message="seed") as w:
        w.insert("P", [{"name": n} for n in "abcd"])
        w.insert("C", [{"name": "x"}])
        w.insert("K", [{"src": "a", "dst": "b", "id": "1"}, {"src": "b", "dst": "c", "id": "2"}])
        w.insert("W", [{"src": "a", "dst": "x", "id": "w1"}])
    CACHE.clear()
    yield g
    CACHE.clear()


def fresh(g, edge, branch="main"):
    snap = g.snapshot(branch)
    t = snap.dataset(edge).to_table(columns=["src", "dst", "id"])
    e = snap.type(edge, "edge")
    keys = {n: snap.dataset(n).to_table(columns=["id"])["id"].combine_chunks() for n in ("P", "C")}
    return from_edges(
        keys[e.src],
        None if e.dst == e.src else keys[e.dst],
        t["src"].combine_chunks(),
        t["dst"].combine_chunks(),
        t["id"].combine_chunks(),
    )


def test_a_second_read_of_one_state_is_a_hit_and_a_write_is_a_new_key(g):
    first = adjacency(g.snapshot(), "K")
    assert adjacency(g.snapshot(), "K") is first
    assert (CACHE.hits, CACHE.misses) == (1, 1)
    with g.write(message="more") as w:
        w.insert("K", [{"src": "c", "dst": "d", "id": "3"}])
    after = adjacency(g.snapshot(), "K")
    assert after is not first and after.equals(fresh(g, "K")) and after.edge_count == 3
    assert adjacency(g.snapshot("main~1"), "K") is first  # the old state is still cached
    # A change to an endpoint node table alone is a new key too (new node, no edge).
    with g.write(message="node") as w:
        w.insert("P", [{"name": "e"}])
    grown = adjacency(g.snapshot(), "K")
    assert len(grown.src_keys) == 5 and grown.equals(fresh(g, "K"))


def test_bipartite_and_dtypes(g):
    csr = adjacency(g.snapshot(), "W")
    assert not csr.same_type and csr.dst_keys.to_pylist() == ["x"]
    assert csr.out_targets.dtype.itemsize == 4 and csr.out_offsets.dtype.itemsize == 8
    assert csr.src_id("a") == 0 and csr.src_id("zz") == -1 and csr.dst_id("x") == 0


def test_lru_within_the_budget():
    c = AdjacencyCache(10**9)
    small = [
        from_edges(
            pa.array([f"n{i}", f"m{i}"]),
            None,
            pa.array([f"n{i}"]),
            pa.array([f"m{i}"]),
            pa.array([f"e{i}"]),
        )
        for i in range(3)
    ]
    c.set_budget(small[0].nbytes * 2)
    for i, csr in enumerate(small):
        c.put(i, csr)
    assert c.get(0) is None and c.get(1) is small[1] and c.get(2) is small[2]
    assert c.nbytes <= c.budget_bytes
    c.get(1)  # now 2 is the least recently used
    c.put(3, small[0])
    assert c.get(2) is None and c.get(1) is small[1]
    c.set_budget(0)
    assert len(c) == 0 and c.nbytes == 0
    built = c.get_or_build("big", lambda: small[0])  # larger than the budget: not kept
    assert built is small[0] and c.get("big") is None


def test_concurrent_readers_build_once(g):
    got = []

    def read():
        got.append(adjacency(g.snapshot(), "K"))

    threads = [threading.Thread(target=read) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(x) for x in got}) == 1 and CACHE.misses == 1


def test_an_adjacency_above_the_memory_limit_is_a_typed_error(g):
    with pytest.raises(QueryTooLargeError, match="adjacency of K"):
        adjacency(g.snapshot(), "K", max_bytes=10)
    assert len(CACHE) == 0
    assert adjacency(g.snapshot(), "K", max_bytes=10**6).edge_count == 2


def test_set_budget_refuses_bad_input():
    with pytest.raises(ValueError):
        cache_mod.set_budget(-1)
    with pytest.raises(ValueError):
        cache_mod.set_budget(True)  # type: ignore[arg-type]


def test_a_query_checks_the_adjacency_against_its_own_limit(g, monkeypatch):
    """The server gives adjacencies their own limit (`adjacency_memory_mb`): a traversal
    whose adjacency fits it runs on the adjacency even past DuckDB's memory limit; past
    it (or past the memory limit when there is no adjacency limit) the SQL plan answers."""
    from graphlake.adjacency import load
    from graphlake.query import executor
    from graphlake.read.sql import SqlLimits

    monkeypatch.setattr(load, "estimated_bytes", lambda *_: 300 * 2**20)
    q = "MATCH (a:P {name: 'a'})-[:K]->(b) RETURN b.name"

    def executors(limits):
        CACHE.clear()
        plan = executor.run_query(g.snapshot(), q, limits=limits, explain=True)
        assert executor.run_query(g.snapshot(), q, limits=limits).to_pylist() == [{"b.name": "b"}]
        return set(plan.column("executor").to_pylist())

    assert "csr" in executors(SqlLimits(memory_limit_mb=256, adjacency_memory_mb=512))
    assert "csr" not in executors(SqlLimits(memory_limit_mb=256))
    assert "csr" not in executors(SqlLimits(memory_limit_mb=1024, adjacency_memory_mb=256))
