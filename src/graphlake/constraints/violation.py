"""A constraint violation found in a change set."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    kind: str  # "unique" | "endpoint" | "dangling" | "cardinality" | "value"
    table: str
    entity_id: str
    message: str  # complete on its own: what a merge reports per conflict
    properties: tuple[str, ...] = ()
    # The violation in brief, for a list under one heading per rule (a write's error):
    # "email='a@x' on 'A' and 'B'", "src Person 'Ghost'", "'A'->'B'", "'A' has 2".
    detail: str = ""
