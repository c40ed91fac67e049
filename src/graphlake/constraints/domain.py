"""Values Arrow can store but a property's type does not admit.

* `Vector(dim)`: every element finite. NaN has no distance and an infinity breaks every
  vector index, so neither is a vector value.
* `Date` and `DateTime` (also as list items): 0001-01-01 .. 9999-12-31 (UTC). Arrow's
  date32 and timestamp reach far beyond, but Python's `date` / `datetime` do not: a row
  outside that range makes every full read of its table (to Python, JSON, SQL) fail.

Violations name the table, the property and the row key, like the other value checks.
Every check is an Arrow kernel over the column, chunk by chunk (no copy of a vector
column).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.violation import Violation
from graphlake.schema.model import Property, TypeRef

__all__ = ["DATE_KINDS", "domain_kind", "domain_violations"]

DATE_KINDS = ("Date", "DateTime")
_LIMITS: dict[str, tuple[object, object]] = {
    "Date": (dt.date.min, dt.date.max),
    "DateTime": (dt.datetime.min.replace(tzinfo=dt.UTC), dt.datetime.max.replace(tzinfo=dt.UTC)),
}
_SHOWN_LIMITS = {
    "Date": "0001-01-01..9999-12-31",
    "DateTime": "0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z",
}

# The elements of one Arrow array that break the rule: a boolean mask (nulls: fine).
ElementCheck = Callable[[pa.Array], pa.Array]


def domain_violations(
    table: str, prop: Property, col: pa.ChunkedArray, ids: pa.ChunkedArray
) -> list[Violation]:
    """The rows of `col` (property `prop`) holding a value outside its type's domain."""
    kind, in_list = _element_kind(prop.type)
    if kind == "Vector" and not in_list:
        rows = _chunked(col, _non_finite_vectors)
        what = "holds NaN or an infinity (vector values must be finite)"
    elif kind in DATE_KINDS:
        check = _outside(*_LIMITS[kind])
        rows = _chunked(col, lambda chunk: _bad_rows(chunk, check, in_list))
        what = f"is outside the supported {kind} range {_SHOWN_LIMITS[kind]}"
        what = f"has an item that {what}" if in_list else what
    else:
        return []
    if not rows:
        return []
    taken = pa.array(rows, type=pa.int64())
    bad_ids = pc.take(ids, taken).to_pylist()
    # A vector is too long to quote; a date is shown as Arrow prints it.
    shown = (
        [""] * len(rows) if kind == "Vector" else [f"={v}" for v in _as_text(pc.take(col, taken))]
    )
    return [
        Violation("value", table, str(key), f"{prop.name}{value} {what}", (prop.name,))
        for key, value in zip(bad_ids, shown, strict=True)
    ]


def domain_kind(t: TypeRef) -> str | None:
    """The kind whose domain is checked for a property of type `t`, if any."""
    kind, _ = _element_kind(t)
    return kind if kind == "Vector" or kind in DATE_KINDS else None


def _element_kind(t: TypeRef) -> tuple[str, bool]:
    if t.kind == "List" and t.item is not None:
        return t.item.kind, True
    return t.kind, False


def _outside(lo: object, hi: object) -> ElementCheck:
    def check(values: pa.Array) -> pa.Array:
        return pc.or_(
            pc.less(values, pa.scalar(lo, type=values.type)),
            pc.greater(values, pa.scalar(hi, type=values.type)),
        )

    return check


def _chunked(col: pa.ChunkedArray, bad_rows: Callable[[pa.Array], list[int]]) -> list[int]:
    """`bad_rows` of each chunk, as row numbers of the whole column."""
    rows: list[int] = []
    offset = 0
    for chunk in col.chunks:
        if len(chunk) and chunk.null_count < len(chunk):
            rows += [offset + i for i in bad_rows(chunk)]
        offset += len(chunk)
    return rows


def _bad_rows(chunk: pa.Array, check: ElementCheck, in_list: bool) -> list[int]:
    """Rows whose value (or, `in_list`, any item) breaks `check`."""
    values = pc.list_flatten(chunk) if in_list else chunk
    mask = pc.fill_null(check(values), False)
    if not pc.any(mask).as_py():
        return []
    found = pc.filter(pc.list_parent_indices(chunk), mask) if in_list else pc.indices_nonzero(mask)
    return pc.unique(found).to_pylist()


def _non_finite_vectors(chunk: pa.FixedSizeListArray) -> list[int]:
    """Rows of a Vector chunk holding NaN or an infinity.

    Vector columns are the bulk of a table (1M x 128 floats is 512 MB), so the common
    case costs one pass: the sum of all elements is finite exactly when no element is
    NaN or infinite, unless finite elements overflow it, which only sends us to the
    exact element-by-element test below.
    """
    dim = chunk.type.list_size
    # The child values behind this chunk, row-aligned (null rows keep their slots).
    values = chunk.values.slice(chunk.offset * dim, len(chunk) * dim)
    total = pc.sum(values).as_py()
    if total is None or math.isfinite(total):
        return []
    bad = pc.indices_nonzero(pc.fill_null(pc.invert(pc.is_finite(values)), False))
    rows = pc.unique(pc.divide(bad, pa.scalar(dim, bad.type)))  # integer division
    valid = pc.filter(rows, pc.take(pc.is_valid(chunk), rows))  # a null vector is fine
    return valid.to_pylist()


def _as_text(values: pa.ChunkedArray) -> list[str]:
    """Values as text without going through Python objects (which cannot hold them)."""
    if pa.types.is_date(values.type) or pa.types.is_timestamp(values.type):
        return [str(v) for v in pc.cast(values, pa.string()).to_pylist()]
    if pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        item = values.type.value_type
        if pa.types.is_date(item) or pa.types.is_timestamp(item):
            return [str(v) for v in pc.cast(values, pa.list_(pa.string())).to_pylist()]
    return [repr(v) for v in values.to_pylist()]
