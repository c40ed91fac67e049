"""The adjacency of one edge type at a pinned snapshot: `adjacency(snapshot, "Knows")`.

Reads only the edge table's `src`, `dst` and `id` columns and the endpoint node tables'
`id` column at the snapshot's exact table states. This is the one entry point traversal
and graph algorithms use; caching and delta maintenance live behind it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from graphlake.adjacency.csr import Csr, from_edges
from graphlake.schema.model import EdgeType

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


def adjacency(snapshot: Snapshot, edge_type: str) -> Csr:
    """The CSR (both directions) of `edge_type` as `snapshot` shows it."""
    edge = snapshot.type(edge_type, "edge")
    assert isinstance(edge, EdgeType)  # type(..., "edge") refuses a node type
    edges = snapshot.dataset(edge_type).to_table(columns=["src", "dst", "id"])
    src_nodes = _keys(snapshot, edge.src)
    dst_nodes = None if edge.dst == edge.src else _keys(snapshot, edge.dst)
    return from_edges(
        src_nodes,
        dst_nodes,
        _array(edges["src"]),
        _array(edges["dst"]),
        _array(edges["id"]),
    )


def _keys(snapshot: Snapshot, node_type: str) -> pa.Array:
    return _array(snapshot.dataset(node_type).to_table(columns=["id"])["id"])


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks()
