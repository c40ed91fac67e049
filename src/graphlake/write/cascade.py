"""Cascading node deletes, expanded into explicit edge deletes in call order.

`w.delete("Person", keys, cascade=True)` deletes, at that point of the transaction,
every edge touching those nodes: the head's edges (found by index on src/dst) as the
transaction's earlier operations left them, and edges it wrote itself before. Expanding
it into a plain node delete followed by an edge delete keeps "operations apply in call
order" true for cascades too: re-inserting the node later in the same write brings no
old edge back, and writing an edge id the cascade removed is a replacement, not a
duplicate. An edge written *after* the cascade that points at a deleted node is an
error (a missing endpoint), as it would be in its own write.
"""

from __future__ import annotations

from collections.abc import Callable

import lance

from graphlake.constraints.endpoints import edges_touching
from graphlake.schema.model import EdgeType, Schema
from graphlake.storage.plan import Op

Ends = tuple[str | None, str | None]  # (src, dst); None: not known to touch the keys


def expand_cascades(
    schema: Schema, ops: list[Op], dataset: Callable[[str], lance.LanceDataset]
) -> list[Op]:
    if not any(op.cascade for op in ops):
        return ops
    out: list[Op] = []
    for op in ops:
        if not op.cascade:
            out.append(op)
            continue
        out.append(Op("delete", op.table, keys=op.keys))
        for et in schema.edges_touching(op.table):
            ids = _touching_now(et, op.table, set(op.keys), out, dataset(et.name))
            if ids:
                out.append(Op("delete", et.name, keys=tuple(sorted(ids))))
    return out


def _touching_now(
    et: EdgeType, node_type: str, keys: set[str], earlier: list[Op], ds: lance.LanceDataset
) -> set[str]:
    """Edges of `et` touching `keys` after the `earlier` operations."""
    head = edges_touching(et, node_type, sorted(keys), ds)
    state: dict[str, Ends | None] = {
        r["id"]: (r["src"], r["dst"]) for r in head.select(["id", "src", "dst"]).to_pylist()
    }
    for op in earlier:
        if op.table != et.name:
            continue
        if op.kind == "delete":
            for key in op.keys:
                state[key] = None
            continue
        if op.kind == "overwrite":
            state = {}
        assert op.rows is not None
        cols = [c for c in ("id", "src", "dst") if c in op.rows.column_names]
        for row in op.rows.select(cols).to_pylist():
            before = state.get(row["id"]) or (None, None)
            state[row["id"]] = (row.get("src", before[0]), row.get("dst", before[1]))
    return {
        edge_id
        for edge_id, ends in state.items()
        if ends is not None
        and ((et.src == node_type and ends[0] in keys) or (et.dst == node_type and ends[1] in keys))
    }
