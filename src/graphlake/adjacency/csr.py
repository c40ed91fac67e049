"""A compressed adjacency (CSR, both directions) of one edge table at one table state.

Nodes are numbered densely by an index the adjacency owns, one per endpoint type:
`src_keys[i]` is the key of source node i, `dst_keys[j]` of target node j (one array,
the same object, when the edge type joins a node type to itself, as `Knows: Person ->
Person` does; keys are unique per node type only). Lance row positions move on update
and compaction and `_rowid`s are local to one lineage, so neither can be a node id here.
`out_offsets[i]:out_offsets[i+1]` slices `out_targets` (the dense target ids of i's
edges) and `out_edges` (each edge's row in `edge_ids`, the edge table's `id` column in
this adjacency's order); `in_offsets[j]:in_offsets[j+1]` slices `in_sources` and
`in_edges` for target j. Edge rows are numbered in (src, dst, id) order, so `out_edges`
is 0..m-1 and two builds of one edge set are equal array for array.

Offsets are int64; node ids and edge rows (`out_targets`, `out_edges`, `in_sources`,
`in_edges`) are int32 while the node and edge counts fit (`ID32`), int64 beyond: 8 bytes
per edge per direction plus the edge's `id` string once (measured by bench/query.py).

This module is pure (numpy and pyarrow only): loading one from a table state, keeping it
current through lineage deltas and caching it live beside it (`graphlake.adjacency`).
"""

from __future__ import annotations

import bisect
import threading
import weakref
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

INDEX = np.int64  # offsets (and node ids and edge rows past ID32)
ID32 = 2**31 - 1  # node and edge counts below this: node ids and edge rows are int32


@dataclass(frozen=True, eq=False)
class Csr:
    src_keys: pa.Array  # dense source id -> node key (string), sorted
    dst_keys: pa.Array  # dense target id -> node key; `is src_keys` for a same-type edge
    edge_ids: pa.Array  # edge row -> the edge's `id`
    out_offsets: np.ndarray  # len(src_keys) + 1
    out_targets: np.ndarray  # m: dense id of each edge's dst, grouped by src
    out_edges: np.ndarray  # m: edge row of each entry of out_targets
    in_offsets: np.ndarray  # len(dst_keys) + 1
    in_sources: np.ndarray  # m: dense id of each edge's src, grouped by dst
    in_edges: np.ndarray  # m: edge row of each entry of in_sources

    @property
    def same_type(self) -> bool:
        """Both endpoints are of one node type: one dense id space (a graph, not bipartite)."""
        return self.src_keys is self.dst_keys

    @property
    def edge_count(self) -> int:
        return len(self.out_targets)

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (what a cache budget counts)."""
        arrays = (
            self.out_offsets,
            self.out_targets,
            self.out_edges,
            self.in_offsets,
            self.in_sources,
            self.in_edges,
        )
        keys = self.src_keys.nbytes + (0 if self.same_type else self.dst_keys.nbytes)
        return sum(a.nbytes for a in arrays) + keys + self.edge_ids.nbytes

    def src_id(self, key: str) -> int:
        """The dense source id of one key (-1 if none): a binary search of the sorted
        keys, no hash table built per call."""
        return find_key(self.src_keys, key)

    def dst_id(self, key: str) -> int:
        """The dense target id of one key (-1 if none)."""
        return find_key(self.dst_keys, key)

    def dense_src(self, keys: pa.Array | list[str]) -> np.ndarray:
        """Dense source ids of `keys` (-1 for a key that is no source node here)."""
        return _lookup(self.src_keys, keys)

    def dense_dst(self, keys: pa.Array | list[str]) -> np.ndarray:
        """Dense target ids of `keys` (-1 for a key that is no target node here)."""
        return _lookup(self.dst_keys, keys)

    def equals(self, other: Csr) -> bool:
        return (
            self.src_keys.equals(other.src_keys)
            and self.dst_keys.equals(other.dst_keys)
            and self.edge_ids.equals(other.edge_ids)
            and all(
                np.array_equal(getattr(self, f), getattr(other, f))
                for f in (
                    "out_offsets",
                    "out_targets",
                    "out_edges",
                    "in_offsets",
                    "in_sources",
                    "in_edges",
                )
            )
        )


def from_edges(
    src_nodes: pa.Array,
    dst_nodes: pa.Array | None,
    src: pa.Array,
    dst: pa.Array,
    ids: pa.Array,
) -> Csr:
    """The adjacency of the edges (`src[j]` -> `dst[j]`, edge id `ids[j]`) between the
    keys of the source type's nodes `src_nodes` and the target type's `dst_nodes` (None:
    the same type). Every endpoint must be one of them (the store's endpoint rule)."""
    src_keys = sorted_keys(src_nodes)
    dst_keys = src_keys if dst_nodes is None else sorted_keys(dst_nodes)
    small = max(len(src_keys), len(dst_keys), len(src)) < ID32
    ids_type = np.int32 if small else INDEX
    if dst_nodes is None and src.type == dst.type:  # one hash table, probed by both columns
        ends = _dense(src_keys, pa.chunked_array([src, dst], src.type), ids_type)
        s, d = ends[: len(src)], ends[len(src) :]  # views: freed with the reordered copies
        del ends
    else:
        s = _dense(src_keys, src, ids_type)
        d = _dense(dst_keys, dst, ids_type)
    edge_ids = pa.array(ids, pa.string()) if not isinstance(ids, pa.Array) else ids
    # Edge rows in (src, dst, id) order: deterministic, so equal edge sets give equal arrays.
    order = _order(s, d, edge_ids, len(dst_keys))
    s, d = s[order], d[order]
    edge_ids = edge_ids.take(pa.array(order)) if len(order) else edge_ids
    del order  # before the in-order's sort: the build's peak memory is no more than before
    out_offsets = group_offsets(s, len(src_keys))
    out_edges = np.arange(len(s), dtype=ids_type)
    # Edges are in (src, dst, id) order: a stable sort by dst gives (dst, src, id).
    by_dst = stable_order(d, len(dst_keys))
    return Csr(
        src_keys=src_keys,
        dst_keys=dst_keys,
        edge_ids=edge_ids,
        out_offsets=out_offsets,
        out_targets=d,
        out_edges=out_edges,
        in_offsets=group_offsets(d[by_dst], len(dst_keys)),
        in_sources=s[by_dst],
        in_edges=by_dst.astype(ids_type),
    )


def sorted_keys(keys: pa.Array) -> pa.Array:
    out = pc.take(keys, pc.sort_indices(keys))
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


# A sorted key array this long or longer is searched through a sample of every
# SAMPLE_STEP-th key, kept as Python strings beside the array (about 1/SAMPLE_STEP of
# its keys: 15,625 strings for 1M nodes): C's bisect over the sample, then a few
# comparisons of Arrow scalars within one step, instead of ~20 for the whole array
# (each scalar read costs ~0.7 us; an anchored query makes one such search).
SAMPLED_FROM = 4096
SAMPLE_STEP = 64
_samples: dict[int, tuple[weakref.ref, list[str]]] = {}
_samples_lock = threading.Lock()


def _sample(keys: pa.Array) -> list[str]:
    """Every SAMPLE_STEP-th key of `keys`, built once per array (kept while it lives)."""
    found = _samples.get(id(keys))
    if found is not None and found[0]() is keys:
        return found[1]
    sample = pc.take(keys, pa.array(np.arange(0, len(keys), SAMPLE_STEP))).to_pylist()
    with _samples_lock:
        _samples[id(keys)] = (weakref.ref(keys), sample)
        weakref.finalize(keys, _samples.pop, id(keys), None)
    return sample


def find_key(keys: pa.Array, key: str) -> int:
    """The position of `key` in the sorted `keys`, -1 if absent: a binary search (through
    a sample of the keys for long arrays, `SAMPLED_FROM`)."""
    lo, hi = 0, len(keys)
    if hi >= SAMPLED_FROM:
        sample = _sample(keys)
        i = bisect.bisect_left(sample, key)  # sample[i - 1] < key <= sample[i]
        if i > 0:
            lo = (i - 1) * SAMPLE_STEP + 1
        if i < len(sample):
            hi = i * SAMPLE_STEP
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid].as_py() < key:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(keys) and keys[lo].as_py() == key else -1


def _lookup(space: pa.Array, keys: pa.Array | list[str]) -> np.ndarray:
    found = pc.index_in(pa.array(keys, pa.string()), value_set=space)
    return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(INDEX)


def stable_order(values: np.ndarray, n: int) -> np.ndarray:
    """`np.argsort(values, kind="stable")` of ints in [0, n), as LSD radix passes over
    16-bit digits: numpy's stable sort of uint16 is a radix sort (O(m) a pass), of int32
    a timsort (one pass below 65,536 nodes, two below 2**32)."""
    order = None
    shift = 0
    while order is None or (n - 1) >> shift > 0:
        ranked = values if order is None else values[order]
        digit = ((ranked >> shift) & 0xFFFF).astype(np.uint16)
        del ranked
        step = np.argsort(digit, kind="stable")
        del digit
        order = step if order is None else order[step]
        del step
        shift += 16
    return order


def _dense(
    keys: pa.Array, values: pa.Array | pa.ChunkedArray, dtype: type[np.integer]
) -> np.ndarray:
    """Each value's position in `keys`: one Arrow hash lookup per value (C++), read as
    int32 without a wider copy."""
    found = pc.index_in(values, value_set=keys)
    if found.null_count:
        raise ValueError("an edge endpoint is not among the adjacency's nodes")
    return found.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


def _order(s: np.ndarray, d: np.ndarray, ids: pa.Array, n_dst: int) -> np.ndarray:
    """The permutation sorting edges by (s, d, id): one stable sort of an int64 key
    (s, d); the edge ids are compared only within runs of equal (s, d), parallel edges,
    which are few (no sort of every id string)."""
    if not len(s):
        return np.zeros(0, INDEX)
    key = s.astype(INDEX) * max(n_dst, 1) + d
    order = np.argsort(key, kind="stable")
    key = key[order]
    parallel = key[1:] == key[:-1]
    if not parallel.any():
        return order
    run = np.zeros(len(key), dtype=bool)
    run[1:] = parallel
    run[:-1] |= parallel
    at = np.flatnonzero(run)  # positions inside runs of equal (s, d), still in key order
    rows = order[at]
    by_id = pc.sort_indices(
        pa.table({"key": key[at], "id": ids.take(pa.array(rows))}),
        sort_keys=[("key", "ascending"), ("id", "ascending")],
    )
    order[at] = rows[by_id.to_numpy()]  # each run sorted in place by id
    return order


def group_offsets(grouped: np.ndarray, n: int) -> np.ndarray:
    counts = np.bincount(grouped, minlength=n) if len(grouped) else np.zeros(n, INDEX)
    offsets = np.zeros(n + 1, INDEX)
    np.cumsum(counts, out=offsets[1:])
    return offsets
