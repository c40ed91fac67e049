"""Structured merge conflicts. A conflict never picks a winner silently.

The vocabulary (the kinds and the `Conflict` record) sits at the bottom of the layers
because both the merge engine and the schema's three-way merge (`schema/merge3.py`) speak
it; `graphlake.merge.conflicts` re-exports it for the merge modules."""

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
    ORPHAN_EDGE,
    UNIQUE_VIOLATION,
    CARDINALITY_VIOLATION,
    VALUE_CONSTRAINT_VIOLATION,
)
# Schema conflicts: the two sides changed one type or property incompatibly
# (`graphlake.schema.merge3`). `strategy` resolves these like data conflicts.
SCHEMA_CONFLICT = "schema_conflict"
# Data-check conflicts: both sides changed one data check (by name) differently
# (`graphlake.merge.data_checks`); `strategy` resolves these too. `table` is
# DATA_CHECKS_TABLE (no type can have that name), `entity_id` the check's name.
DATA_CHECK_CONFLICT = "data_check_conflict"
DATA_CHECKS_TABLE = "(data checks)"
KINDS = DATA_KINDS + CONSTRAINT_KINDS + (SCHEMA_CONFLICT, DATA_CHECK_CONFLICT)


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
    # merge_many: the two parties, each side's row under its own name in `rows`
    # (None in a two-way merge: its source and target). A conflict with the target names
    # (the sources that changed the key, the target); one between two sources
    # (`between_sources`) names (the later source, the earlier one(s)). `target` always
    # holds the target's row (None where it has none), `source` the first side's row.
    sides: tuple[str, str] | None = None
    between_sources: bool = False
    rows: dict[str, dict[str, Any] | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["properties"] = list(self.properties)
        d["sides"] = list(self.sides) if self.sides else None
        return d


def with_target(conflict: Conflict, sources: str, target: str) -> Conflict:
    """A merge_many conflict of the sources' combined row with the target's."""
    return replace(
        conflict, sides=(sources, target), rows={sources: conflict.source, target: conflict.target}
    )


def between_sources(
    conflict: Conflict, later: str, earlier: str, target_row: dict[str, Any] | None
) -> Conflict:
    """A merge_many conflict between two sources, made from the per-key rule's conflict
    of `later`'s row (as source) with `earlier`'s (as target): `rows` holds both under
    their names, `source` the later source's row, `target` the target's `target_row`."""
    message = conflict.message.replace("on both sides", f"by {later} and {earlier}")
    message = message.replace("on the target", f"on {earlier}").replace(
        "on the source", f"on {later}"
    )
    return replace(
        conflict,
        message=message,
        sides=(later, earlier),
        between_sources=True,
        rows={later: conflict.source, earlier: conflict.target},
        target=target_row,
    )
