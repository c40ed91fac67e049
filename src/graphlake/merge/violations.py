"""Constraint checks of a merged result, reported as conflicts (never auto-resolved)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import lance

from graphlake.catalog.commits import Commit
from graphlake.constraints.check import all_violations
from graphlake.merge.conflicts import (
    CARDINALITY_VIOLATION,
    ORPHAN_EDGE,
    UNIQUE_VIOLATION,
    VALUE_CONSTRAINT_VIOLATION,
    Conflict,
)
from graphlake.storage.plan import TablePlan

if TYPE_CHECKING:
    from graphlake.repo import Repo

_KIND = {
    "unique": UNIQUE_VIOLATION,
    "endpoint": ORPHAN_EDGE,
    "dangling": ORPHAN_EDGE,
    "cardinality": CARDINALITY_VIOLATION,
    "value": VALUE_CONSTRAINT_VIOLATION,
}


def merge_violations(repo: Repo, target: Commit, plans: dict[str, TablePlan]) -> list[Conflict]:
    """Violations the merge's effects (`plans`, against the target) would cause."""
    if not plans:
        return []

    def dataset(name: str) -> lance.LanceDataset:
        return repo.tables.open(target.tables[name])

    out: list[Conflict] = []
    seen: set[tuple[str, str, str, str]] = set()
    for v in all_violations(repo.schemas.of(target), plans, dataset):
        kind = _KIND[v.kind]
        if (kind, v.table, v.entity_id, v.message) not in seen:
            seen.add((kind, v.table, v.entity_id, v.message))
            out.append(Conflict(kind, v.table, v.entity_id, v.message, v.properties))
    return out
