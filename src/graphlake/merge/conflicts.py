"""Structured merge conflicts. A conflict never picks a winner silently."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

# Data conflicts: two sides disagree about one entity. `strategy` may resolve these.
DIVERGENT_INSERT = "divergent_insert"
DIVERGENT_UPDATE = "divergent_update"
DELETE_VS_UPDATE = "delete_vs_update"
DATA_KINDS = (DIVERGENT_INSERT, DIVERGENT_UPDATE, DELETE_VS_UPDATE)

# Constraint violations of the merged result: never auto-resolved.
ORPHAN_EDGE = "orphan_edge"
UNIQUE_VIOLATION = "unique_violation"
CARDINALITY_VIOLATION = "cardinality_violation"
VALUE_CONSTRAINT_VIOLATION = "value_constraint_violation"
CONSTRAINT_KINDS = (
    ORPHAN_EDGE, UNIQUE_VIOLATION, CARDINALITY_VIOLATION, VALUE_CONSTRAINT_VIOLATION,
)
# Schema conflicts: the two sides changed one type or property incompatibly
# (`graphlake.schema.merge3`). `strategy` resolves these like data conflicts.
SCHEMA_CONFLICT = "schema_conflict"
KINDS = DATA_KINDS + CONSTRAINT_KINDS + (SCHEMA_CONFLICT,)


@dataclass(frozen=True)
class Conflict:
    """One conflict: what kind, where, and the values each side holds."""

    kind: str
    table: str
    entity_id: str
    message: str
    properties: tuple[str, ...] = ()
    base: dict[str, Any] | None = None
    source: dict[str, Any] | None = None
    target: dict[str, Any] | None = None
    resolution: str | None = field(default=None, compare=False)  # "ours"/"theirs" if resolved
    # merge_many: the branches whose rows `source` and `target` hold (None in a two-way
    # merge: its source and target). A conflict with the target names (the sources that
    # changed the key, the target); one between two sources (`between_sources`) names (the
    # later source, the earlier one(s)), and then `target` holds the earlier sources' row.
    sides: tuple[str, str] | None = None
    between_sources: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["properties"] = list(self.properties)
        d["sides"] = list(self.sides) if self.sides else None
        return d


def between_sources(conflict: Conflict, later: str, earlier: str) -> Conflict:
    """A merge_many conflict between two sources: `source` holds the later source's row,
    `target` the earlier source(s)' (not the target's, which is neither)."""
    message = conflict.message.replace("on both sides", f"by {later} and {earlier}")
    message = message.replace("on the target", f"on {earlier}").replace(
        "on the source", f"on {later}")
    return replace(conflict, message=message, sides=(later, earlier), between_sources=True)
