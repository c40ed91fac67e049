"""`@unique(p, …)`: no two rows of the result share the values (nulls never collide)."""

from __future__ import annotations

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.vectorised import (
    VECTOR_MIN_ROWS,
    all_valid,
    count_distinct,
    exact_equality,
)
from graphlake.constraints.violation import Violation
from graphlake.storage.lookup import rows_where_in
from graphlake.storage.plan import TablePlan


def unique_violations(plan: TablePlan, ds: lance.LanceDataset) -> list[Violation]:
    """Clashes among the rows `plan` writes, and between them and the head's other rows."""
    written = plan.written
    out: list[Violation] = []
    if written.num_rows == 0:
        return out
    gone: set[str] | None = None
    keys: list[str] = []
    for cols in plan.type.uniques:
        if _proven_unique(plan, ds, written, cols):
            continue
        if gone is None:
            gone = set(plan.removed_ids)
            keys = written.column("id").to_pylist()
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
    detail = f"{shown} on {a!r} and {b!r}"
    return Violation(
        "unique",
        table,
        str(b),
        f"@unique({', '.join(cols)}) violated: {detail}",
        tuple(cols),
        detail,
    )


def _proven_unique(
    plan: TablePlan, ds: lance.LanceDataset, written: pa.Table, cols: tuple[str, ...]
) -> bool:
    """True when a vectorised test proves `cols` has no clash; False: run the exact check.

    For large writes only, and only for types whose Arrow equality is Python's: the
    within-write test counts distinct tuples, the head test matches head rows to written
    rows by value.
    """
    if written.num_rows < VECTOR_MIN_ROWS:
        return False
    if not all(exact_equality(written.schema.field(c).type) for c in cols):
        return False
    try:
        valid, distinct = count_distinct(written, list(cols))
        if valid == 0:
            return True
        if distinct != valid:
            return False
        if plan.delete_all:
            return True
        # Null tuples never clash; below, a null key matches nothing (index_in, join).
        sub = written.select(["id", *cols])
        first = sub.column(cols[0]).combine_chunks()
        head = rows_where_in(ds, cols[0], first, ["id", *cols])
        head = head.filter(all_valid(head, cols))
        if head.num_rows == 0:
            return True
        if len(cols) == 1:
            at = pc.index_in(head.column(cols[0]), value_set=first)
            head_ids = head.column("id")
            writer_ids = sub.column("id").take(at)
        else:
            writers = sub.rename_columns(["__writer_id", *cols])
            joined = head.select(["id", *cols]).join(writers, keys=list(cols), join_type="inner")
            head_ids, writer_ids = joined.column("id"), joined.column("__writer_id")
        removed = pa.chunked_array(
            [*plan.deleted_old.column("id").chunks, *plan.updated_old.column("id").chunks],
            type=pa.string(),
        ).combine_chunks()
        clash = pc.and_kleene(
            pc.is_valid(writer_ids),
            pc.and_kleene(
                pc.invert(pc.is_in(head_ids, value_set=removed)),
                pc.not_equal(head_ids, writer_ids),
            ),
        )
        return not pc.any(clash).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
