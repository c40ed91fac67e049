"""Edge weights for shortest paths: a numeric property of the edge table at the snapshot,
read with `id` and aligned with the adjacency's edge rows (`csr.edge_ids`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.adjacency.csr import Csr
from graphlake.errors import AlgorithmError, UnknownPropertyError
from graphlake.schema.model import NUMERIC_KINDS

if TYPE_CHECKING:
    from graphlake.read.snapshot import Snapshot


def check_property(snapshot: Snapshot, edge_type: str, name: str) -> None:
    """Raise unless `name` is a numeric property of `edge_type` (before anything is read)."""
    edge = snapshot.type(edge_type, "edge")
    prop = edge.property(name)
    if prop is None:
        known = ", ".join(p.name for p in edge.properties) or "none"
        raise UnknownPropertyError(
            f"edge type {edge_type!r} has no property {name!r} (its properties: {known})"
        )
    if prop.type.kind not in NUMERIC_KINDS:
        raise AlgorithmError(
            f"weight {name!r} of {edge_type!r} is {prop.type}, not a number "
            f"({', '.join(NUMERIC_KINDS)})"
        )


def edge_weights(snapshot: Snapshot, edge_type: str, name: str, csr: Csr) -> np.ndarray:
    """`name`'s value of each edge row of `csr` as float64; a null weight is refused."""
    check_property(snapshot, edge_type, name)
    table = snapshot.dataset(edge_type).to_table(columns=["id", name])
    rows = pc.index_in(csr.edge_ids, value_set=_array(table["id"]))
    if rows.null_count:  # the adjacency and the table are of one table state
        raise AlgorithmError(f"edges of {edge_type!r} changed while reading weights")
    values = _array(table[name]).take(rows)
    if values.null_count:
        raise AlgorithmError(
            f"{values.null_count} edge(s) of {edge_type!r} have no {name!r}: a weight "
            "cannot be null"
        )
    return np.asarray(values.cast(pa.float64()).to_numpy(zero_copy_only=False))


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks()
