"""Map schema types to Arrow: the physical layout of every node and edge table.

A node table is `id` then its properties; an edge table is `id`, `src`, `dst` then its
properties. `id`, `src` and `dst` are strings: a node's id is its `@key` value as text.
"""

from __future__ import annotations

import pyarrow as pa

from graphlake.errors import SchemaError
from graphlake.schema.model import EDGE_COLUMNS, NODE_COLUMNS, EdgeType, NodeType, Property, TypeRef

__all__ = ["arrow_field", "arrow_schema", "arrow_type"]

# Blob is stored as plain large_binary, not with Lance's blob encoding
# ("lance-encoding:blob", `lance.blob_field`): blob-encoded columns read back as
# descriptors, which neither DuckDB nor a row rewrite (update, merge) can take (measured:
# bench/blobs.py). Projection pushdown still keeps blob bytes out of every scan that does
# not ask for the column, and readers hand out lazy handles (graphlake.read.blobs).

_SCALAR_TYPES: dict[str, pa.DataType] = {
    "String": pa.string(),
    "Bool": pa.bool_(),
    "I32": pa.int32(),
    "I64": pa.int64(),
    "U32": pa.uint32(),
    "U64": pa.uint64(),
    "F32": pa.float32(),
    "F64": pa.float64(),
    "Date": pa.date32(),
    # One fixed unit and zone, so values written from any client compare and merge cleanly.
    "DateTime": pa.timestamp("us", tz="UTC"),
    "Blob": pa.large_binary(),
    # Enum values are stored by name; the allowed set is checked on write, not by Arrow.
    "Enum": pa.string(),
}


def arrow_type(t: TypeRef) -> pa.DataType:
    """The Arrow type of a property type."""
    if t.kind in _SCALAR_TYPES:
        return _SCALAR_TYPES[t.kind]
    if t.kind == "Vector" and t.dim is not None:
        # Fixed-size so Lance can build vector indexes on the column.
        return pa.list_(pa.float32(), t.dim)
    if t.kind == "List" and t.item is not None:
        return pa.list_(arrow_type(t.item))
    raise SchemaError(f"no Arrow type for property type {t!r}")


def arrow_field(p: Property) -> pa.Field:
    """The Arrow field of a property: its type and nullability."""
    return pa.field(p.name, arrow_type(p.type), nullable=p.nullable)


def arrow_schema(t: NodeType | EdgeType) -> pa.Schema:
    """The Arrow schema of a node or edge table, tagged with the table's name and kind."""
    columns = EDGE_COLUMNS if t.is_edge else NODE_COLUMNS
    fields = [pa.field(c, pa.string(), nullable=False) for c in columns]
    fields += [arrow_field(p) for p in t.properties]
    metadata = {"graphlake:table": t.name, "graphlake:kind": "edge" if t.is_edge else "node"}
    return pa.schema(fields, metadata=metadata)
