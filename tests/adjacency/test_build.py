"""`csr.from_edges` against a straightforward reference: Python sorts of tuples on
random graphs with parallel edges, self-loops, endpoint types of their own, nodes
without edges, and empty tables."""

from __future__ import annotations

import gc
import random

import numpy as np
import pyarrow as pa
import pytest

from graphlake.adjacency import csr
from graphlake.adjacency.csr import from_edges, stable_order


def reference(src_nodes, dst_nodes, src, dst, ids):
    """Node ids by sorted key; out-order (src, dst, id), in-order (dst, src, row)."""
    src_keys = sorted(src_nodes)
    dst_keys = src_keys if dst_nodes is None else sorted(dst_nodes)
    si = {k: i for i, k in enumerate(src_keys)}
    di = {k: i for i, k in enumerate(dst_keys)}
    edges = sorted((si[a], di[b], e) for a, b, e in zip(src, dst, ids, strict=True))
    by_dst = sorted(range(len(edges)), key=lambda r: (edges[r][1], edges[r][0], r))

    def offsets(groups, n):
        counts = [0] * (n + 1)
        for x in groups:
            counts[x + 1] += 1
        for i in range(n):
            counts[i + 1] += counts[i]
        return counts

    return {
        "src_keys": src_keys,
        "dst_keys": dst_keys,
        "edge_ids": [e for _, _, e in edges],
        "out_offsets": offsets([a for a, _, _ in edges], len(src_keys)),
        "out_targets": [b for _, b, _ in edges],
        "out_edges": list(range(len(edges))),
        "in_offsets": offsets([edges[r][1] for r in by_dst], len(dst_keys)),
        "in_sources": [edges[r][0] for r in by_dst],
        "in_edges": by_dst,
    }


def check(src_nodes, dst_nodes, src, dst, ids):
    want = reference(src_nodes, dst_nodes, src, dst, ids)
    got = from_edges(
        pa.array(src_nodes, pa.string()),
        None if dst_nodes is None else pa.array(dst_nodes, pa.string()),
        pa.array(src, pa.string()),
        pa.array(dst, pa.string()),
        pa.array(ids, pa.string()),
    )
    assert got.same_type == (dst_nodes is None)
    for name, value in want.items():
        array = getattr(got, name)
        have = array.to_pylist() if isinstance(array, pa.Array) else array.tolist()
        assert have == value, name
    for name in ("out_targets", "out_edges", "in_sources", "in_edges"):
        assert getattr(got, name).dtype == np.int32, name
    for name in ("out_offsets", "in_offsets"):
        assert getattr(got, name).dtype == np.int64, name
    assert got.equals(from_edges(*_shuffled(src_nodes, dst_nodes, src, dst, ids)))


def _shuffled(src_nodes, dst_nodes, src, dst, ids):
    """The same graph with nodes and edges in another order (a build must not care)."""
    rng = random.Random(len(ids))
    rows = list(range(len(ids)))
    rng.shuffle(rows)
    nodes = rng.sample(src_nodes, len(src_nodes))
    other = None if dst_nodes is None else rng.sample(dst_nodes, len(dst_nodes))
    return (
        pa.array(nodes, pa.string()),
        None if other is None else pa.array(other, pa.string()),
        pa.array([src[r] for r in rows], pa.string()),
        pa.array([dst[r] for r in rows], pa.string()),
        pa.array([ids[r] for r in rows], pa.string()),
    )


def random_graph(seed, n_src, n_dst, m, *, same_type):
    rng = random.Random(seed)
    src_nodes = [f"n{rng.randrange(10**6):06d}" for _ in range(n_src)]
    src_nodes = list(dict.fromkeys(src_nodes))  # keys are unique per node type
    dst_nodes = None if same_type else list(dict.fromkeys(f"c{i}" for i in range(n_dst)))
    targets = src_nodes if dst_nodes is None else dst_nodes
    hot = src_nodes[: max(1, len(src_nodes) // 10)]  # a few nodes with many parallel edges
    src, dst = [], []
    for _ in range(m if src_nodes and targets else 0):
        a = rng.choice(hot if rng.random() < 0.3 else src_nodes)
        b = a if same_type and rng.random() < 0.1 else rng.choice(targets)  # self-loops
        src.append(a)
        dst.append(b)
    ids = [f"e{i}" for i in rng.sample(range(10 * len(src) + 1), len(src))]
    return src_nodes, dst_nodes, src, dst, ids


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_equal_the_reference(seed):
    rng = random.Random(1000 + seed)
    same_type = seed % 3 != 2
    n = rng.choice([1, 2, 5, 40, 300])
    m = rng.choice([0, 1, 3, 50, 2000])
    check(*random_graph(seed, n, rng.choice([1, 3, 30]), m, same_type=same_type))


def test_parallel_edges_are_ordered_by_id_whatever_their_input_order():
    src = ["a", "a", "a", "b", "a", "a"]
    dst = ["b", "b", "a", "a", "b", "a"]
    ids = ["e9", "e10", "e3", "e1", "e2", "e0"]
    check(["b", "a"], None, src, dst, ids)
    got = from_edges(*_shuffled(["b", "a"], None, src, dst, ids))
    assert got.edge_ids.to_pylist() == ["e0", "e3", "e10", "e2", "e9", "e1"]


def test_empty_tables():
    check([], None, [], [], [])
    check(["a", "b"], None, [], [], [])
    check([], ["x"], [], [], [])
    check(["a"], [], [], [], [])


def test_an_endpoint_outside_the_nodes_is_refused():
    # The store's endpoint rule keeps an edge's endpoints among the nodes; a build that
    # meets one outside them refuses rather than numbering it.
    with pytest.raises(ValueError, match="endpoint"):
        from_edges(
            pa.array(["a", "b"]),
            None,
            pa.array(["a", "gone"]),
            pa.array(["b", "a"]),
            pa.array(["e1", "e2"]),
        )
    with pytest.raises(ValueError, match="endpoint"):
        from_edges(
            pa.array(["a"]), pa.array(["x"]), pa.array(["a"]), pa.array(["a"]), pa.array(["e1"])
        )


@pytest.mark.parametrize("n", [0, 1, 2, 2**16 - 1, 2**16, 2**16 + 1, 3 * 2**20, 2**31 - 1])
def test_stable_order_is_numpys_stable_argsort(n):
    rng = np.random.default_rng(n)
    for m in (0, 1, 5000):
        values = rng.integers(0, max(n, 1), m).astype(np.int32) if n else np.zeros(0, np.int32)
        values[: m // 2] = values[m // 2 : 2 * (m // 2)]  # ties, which must keep their order
        assert np.array_equal(stable_order(values, n), np.argsort(values, kind="stable"))


@pytest.mark.parametrize(
    "n", [0, 1, 63, 4095, csr.SAMPLED_FROM, csr.SAMPLED_FROM + 1, 64 * 100, 64 * 100 + 1, 10_007]
)
def test_find_key_finds_every_key_and_no_other(n):
    rng = random.Random(n)
    keys = sorted({f"k{rng.randrange(10**9):09d}" for _ in range(n)} | {"k", "k~"})
    array = pa.array(keys)
    for i, key in enumerate(keys):
        assert csr.find_key(array, key) == i
    between = [keys[i] + "0" for i in range(len(keys) - 1)]  # after keys[i], before i+1
    for key in ["", "a", "j", "k0", "l", "k~~", *between[:: max(1, n // 500)]]:
        assert csr.find_key(array, key) == -1


def test_a_key_sample_is_built_once_and_dropped_with_its_array():
    array = pa.array([f"k{i:06d}" for i in range(csr.SAMPLED_FROM * 2)])
    assert csr.find_key(array, "k000100") == 100
    sample = csr._sample(array)
    assert csr._sample(array) is sample and len(sample) == 2 * csr.SAMPLED_FROM // 64
    key = id(array)
    del array
    gc.collect()
    assert key not in csr._samples
