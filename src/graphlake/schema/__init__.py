"""The schema language (`.pg` files), its parsed model and its Arrow mapping."""

from graphlake.schema.arrow import arrow_field, arrow_schema, arrow_type
from graphlake.schema.model import (
    EDGE_COLUMNS,
    FLOAT_KINDS,
    INTEGER_KINDS,
    KEY_KINDS,
    NODE_COLUMNS,
    NUMERIC_KINDS,
    RESERVED_NAMES,
    RESERVED_PREFIX,
    SCALARS,
    Cardinality,
    EdgeType,
    NodeType,
    Property,
    Range,
    Schema,
    TableType,
    TypeRef,
)
from graphlake.schema.parser import load_schema, parse_schema

__all__ = [
    "EDGE_COLUMNS",
    "FLOAT_KINDS",
    "INTEGER_KINDS",
    "KEY_KINDS",
    "NODE_COLUMNS",
    "NUMERIC_KINDS",
    "RESERVED_NAMES",
    "RESERVED_PREFIX",
    "SCALARS",
    "Cardinality",
    "EdgeType",
    "NodeType",
    "Property",
    "Range",
    "Schema",
    "TableType",
    "TypeRef",
    "arrow_field",
    "arrow_schema",
    "arrow_type",
    "load_schema",
    "parse_schema",
]
