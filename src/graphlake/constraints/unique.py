"""`@unique(p, …)`: no two rows of the result share the values (nulls never collide)."""

from __future__ import annotations

import lance

from graphlake.constraints.violation import Violation
from graphlake.storage.lookup import rows_where_in
from graphlake.write.plan import TablePlan


def unique_violations(plan: TablePlan, ds: lance.LanceDataset) -> list[Violation]:
    """Clashes among the rows `plan` writes, and between them and the head's other rows."""
    written = plan.written
    out: list[Violation] = []
    if written.num_rows == 0:
        return out
    gone = set(plan.removed_ids)
    keys = written.column("id").to_pylist()
    for cols in plan.type.uniques:
        columns = [written.column(c).to_pylist() for c in cols]
        seen: dict[tuple, str] = {}
        for key, tup in zip(keys, zip(*columns, strict=True), strict=True):
            if any(v is None for v in tup):
                continue
            if tup in seen:
                out.append(_clash(plan.name, cols, tup, seen[tup], key))
            seen[tup] = key
        if seen and not plan.delete_all:
            head = rows_where_in(ds, cols[0], [t[0] for t in seen], ["id", *cols])
            for r in head.to_pylist():
                tup = tuple(r[c] for c in cols)
                if tup in seen and r["id"] not in gone and r["id"] != seen[tup]:
                    out.append(_clash(plan.name, cols, tup, r["id"], seen[tup]))
    return out


def _clash(table: str, cols: tuple[str, ...], tup: tuple, a: str, b: str) -> Violation:
    shown = ", ".join(f"{c}={v!r}" for c, v in zip(cols, tup, strict=True))
    return Violation(
        "unique", table, str(b),
        f"@unique({', '.join(cols)}) violated: {shown} on {a!r} and {b!r}", tuple(cols),
    )
