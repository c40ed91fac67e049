"""A constraint violation found in a change set."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    kind: str  # "unique" | "endpoint" | "dangling" | "cardinality" | "value"
    table: str
    entity_id: str
    message: str
    properties: tuple[str, ...] = ()
