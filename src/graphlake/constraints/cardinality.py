"""`@card(min..max)`: edges of one type per source node, checked for affected sources."""

from __future__ import annotations

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.violation import Violation
from graphlake.schema.model import EdgeType
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.plan import TablePlan


def card_violations(
    plan: TablePlan, plans: dict[str, TablePlan], ds: lance.LanceDataset
) -> list[Violation]:
    """Sources whose edge count leaves the bounds. Affected sources: those whose edges
    `plan` writes or deletes, new source nodes when a minimum is set, and the old source
    of an updated edge (an update may move an edge to another source, leaving the old
    one below the minimum). Counted in Arrow: a million edges stay columnar."""
    t = plan.type
    assert isinstance(t, EdgeType)
    if t.card is None:
        return []
    written = plan.written.column("src")
    parts = [written, plan.deleted_old["src"], plan.updated_old["src"]]
    src_plan = plans.get(t.src)
    if t.card.min > 0 and src_plan is not None:
        parts.append(src_plan.inserted["id"])
    affected = pc.unique(_concat(parts)).drop_null()
    if src_plan is not None and src_plan.deleted_old.num_rows:  # no edges left to count
        affected = affected.filter(
            pc.invert(pc.is_in(affected, value_set=src_plan.deleted_old["id"]))
        )
    if not len(affected):
        return []
    counted = [written]
    if not plan.delete_all:
        head = rows_where_in(ds, "src", affected, ["id", "src"], distinct=True)
        removed = pa.array(plan.removed_ids, pa.string())
        if len(removed) and head.num_rows:
            head = head.filter(pc.invert(pc.is_in(head["id"], value_set=removed)))
        counted.append(head["src"])
    per_src = pa.table({"src": _concat(counted)}).group_by("src").aggregate([("src", "count")])
    where = pc.index_in(affected, value_set=per_src["src"])
    counts = pc.fill_null(pc.take(per_src["src_count"], where), 0)
    lo, hi = t.card.min, t.card.max
    bad = pc.less(counts, lo)
    if hi is not None:
        bad = pc.or_(bad, pc.greater(counts, hi))
    found = pa.table({"src": affected.filter(bad), "n": counts.filter(bad)}).sort_by("src")
    bounds = f"{lo}..{'' if hi is None else hi}"
    return [
        Violation(
            "cardinality",
            t.name,
            src,
            f"{t.src} {src!r} has {n} {t.name} edge(s); @card({bounds})",
            (),
            f"{src!r} has {n}",
        )
        for src, n in zip(found["src"].to_pylist(), found["n"].to_pylist(), strict=True)
    ]


def _concat(parts: list[pa.ChunkedArray | pa.Array]) -> pa.ChunkedArray:
    chunks = [c for p in parts for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
    return pa.chunked_array(chunks, pa.string())
