"""The node space an algorithm runs on, and the Arrow table it answers with.

A same-type edge table (`Knows: Person -> Person`) is a graph over its node type: dense
id i is `csr.src_keys[i]`, and the answer has columns `id` and the value. An edge type
between two node types (`Wrote: Person -> Post`) is a bipartite graph over both node
sets: source nodes are 0..ns-1 and target node j is ns + j; the answer has a leading
`type` column, since a key is unique per node type only. Rows are ordered by (type, id).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.adjacency.csr import INDEX, Csr


def node_count(csr: Csr) -> int:
    return len(csr.src_keys) + (0 if csr.same_type else len(csr.dst_keys))


PAIR_CHUNK = 1 << 16  # edges converted to Python ints at a time (edge_pairs)


def edge_pairs(csr: Csr) -> Iterator[tuple[int, int]]:
    """Dense (source, target) ids in the union node space, in CSR order, as tuples of
    Python ints, converted a chunk at a time. python-igraph copies an edge list element
    by element whatever it is given; from tuples of ints that copy takes about 30% less
    CPU than from a numpy (m, 2) array, which it reads a row view and two numpy scalars at
    a time (bench/algo.py, docs/performance.md), and the chunks bound the extra memory."""
    sources = np.repeat(np.arange(len(csr.src_keys), dtype=INDEX), np.diff(csr.out_offsets))
    offset = 0 if csr.same_type else len(csr.src_keys)
    targets = csr.out_targets
    return chain.from_iterable(
        zip(
            sources[i : i + PAIR_CHUNK].tolist(),
            (targets[i : i + PAIR_CHUNK] + offset).tolist(),
            strict=True,
        )
        for i in range(0, len(targets), PAIR_CHUNK)
    )


def answer(
    csr: Csr,
    src_type: str,
    dst_type: str,
    column: str,
    values: pa.Array,
    *,
    labels: bool = False,
    keep: np.ndarray | None = None,
) -> pa.Table:
    """The table of each node's value (`values` in dense id order), ordered by (type,)
    id. `labels=True`: the values are group labels (components, communities), renumbered
    0, 1, ... in the order each group's first node appears, so equal partitions give equal
    tables. `keep`: a boolean mask of the nodes to report (default all)."""
    if csr.same_type:
        table = pa.table({"id": csr.src_keys, column: values})
    else:
        ns, nd = len(csr.src_keys), len(csr.dst_keys)
        types = pa.array(np.where(np.arange(ns + nd) < ns, src_type, dst_type), pa.string())
        ids = pa.concat_arrays([csr.src_keys, csr.dst_keys])
        table = pa.table({"type": types, "id": ids, column: values})
        order = pc.sort_indices(table, [("type", "ascending"), ("id", "ascending")])
        table = table.take(order)
        if keep is not None:
            keep = keep[order.to_numpy()]
    if keep is not None:
        table = table.filter(pa.array(keep))
    if labels:
        table = table.set_column(
            table.num_columns - 1, column, pa.array(_first_seen(table[column].to_numpy()))
        )
    return table


def _first_seen(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0, 1, ... in order of first appearance."""
    if not len(labels):
        return labels.astype(np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse]
