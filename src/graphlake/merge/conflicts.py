"""The merge engine's name for the conflict vocabulary, which lives in
`graphlake.conflicts` (below the schema layer, which uses it too)."""

from graphlake.conflicts import (
    CARDINALITY_VIOLATION,
    CONSTRAINT_KINDS,
    DATA_KINDS,
    DELETE_VS_UPDATE,
    DIVERGENT_INSERT,
    DIVERGENT_UPDATE,
    KINDS,
    ORPHAN_EDGE,
    SCHEMA_CONFLICT,
    UNIQUE_VIOLATION,
    VALUE_CONSTRAINT_VIOLATION,
    Conflict,
    between_sources,
    with_target,
)

__all__ = [
    "CARDINALITY_VIOLATION",
    "CONSTRAINT_KINDS",
    "DATA_KINDS",
    "DELETE_VS_UPDATE",
    "DIVERGENT_INSERT",
    "DIVERGENT_UPDATE",
    "KINDS",
    "ORPHAN_EDGE",
    "SCHEMA_CONFLICT",
    "UNIQUE_VIOLATION",
    "VALUE_CONSTRAINT_VIOLATION",
    "Conflict",
    "between_sources",
    "with_target",
]
