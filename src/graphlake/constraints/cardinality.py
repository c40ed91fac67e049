"""`@card(min..max)`: edges of one type per source node, checked for affected sources."""

from __future__ import annotations

from collections import Counter

import lance

from graphlake.constraints.violation import Violation
from graphlake.schema.model import EdgeType
from graphlake.storage.lookup import rows_where_in
from graphlake.write.plan import TablePlan


def card_violations(
    plan: TablePlan, plans: dict[str, TablePlan], ds: lance.LanceDataset
) -> list[Violation]:
    """Sources whose edge count leaves the bounds. Affected sources: those whose edges
    `plan` writes or deletes, new source nodes when a minimum is set, and the old source
    of an updated edge (an update may move an edge to another source, leaving the old
    one below the minimum)."""
    t = plan.type
    assert isinstance(t, EdgeType)
    if t.card is None:
        return []
    affected = set(plan.written.column("src").to_pylist())
    affected |= set(plan.deleted_old.column("src").to_pylist())
    affected |= set(plan.updated_old.column("src").to_pylist())
    src_plan = plans.get(t.src)
    if t.card.min > 0 and src_plan is not None:
        affected |= src_plan.inserted_ids
    if src_plan is not None:
        affected -= src_plan.deleted_ids  # a deleted node has no edges to count
    if not affected:
        return []
    counts: Counter[str] = Counter()
    if not plan.delete_all:
        gone = set(plan.removed_ids)
        head = rows_where_in(ds, "src", sorted(affected), ["id", "src"])
        for key, src in zip(
            head.column("id").to_pylist(), head.column("src").to_pylist(), strict=True
        ):
            if key not in gone:
                counts[src] += 1
    for src in plan.written.column("src").to_pylist():
        counts[src] += 1
    lo, hi = t.card.min, t.card.max
    bounds = f"{lo}..{'' if hi is None else hi}"
    return [
        Violation(
            "cardinality", t.name, src,
            f"{t.src} {src!r} has {counts[src]} {t.name} edge(s); @card({bounds})",
            (), f"{src!r} has {counts[src]}",
        )
        for src in sorted(affected)
        if counts[src] < lo or (hi is not None and counts[src] > hi)
    ]
