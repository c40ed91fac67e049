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
_SHOWN_LIMITS = {"Date": "0001-01-01..9999-12-31",
                 "DateTime": "0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999Z"}

# The elements of one Arrow array that break the rule: a boolean mask (nulls: fine).
ElementCheck = Callable[[pa.Array], pa.Array]


def domain_violations(
    table: str, prop: Property, col: pa.ChunkedArray, ids: pa.ChunkedArray
) -> list[Violation]:
    """The rows of `col` (property `prop`) holding a value outside its type's domain."""
    kind, in_list = _element_kind(prop.type)
    if kind == "Vector":
        check = _not_finite_in_vector
        what = "holds NaN or an infinity (vector values must be finite)"
    elif kind in DATE_KINDS:
        check = _outside(*_LIMITS[kind])
        what = f"is outside the supported {kind} range {_SHOWN_LIMITS[kind]}"
    else:
        return []
    if in_list:
        check, what = _any_item(check), f"has an item that {what}"
    rows = _bad_rows(col, check)
    if not rows:
        return []
    taken = pa.array(rows, type=pa.int64())
    bad_ids = pc.take(ids, taken).to_pylist()
    # A vector is too long to quote; a date is shown as Arrow prints it.
    shown = ([""] * len(rows) if kind == "Vector"
             else [f"={v}" for v in _as_text(pc.take(col, taken))])
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
        return pc.or_(pc.less(values, pa.scalar(lo, type=values.type)),
                      pc.greater(values, pa.scalar(hi, type=values.type)))
    return check


def _not_finite_in_vector(values: pa.Array) -> pa.Array:
    return _any_item(lambda items: pc.invert(pc.is_finite(items)))(values)


def _any_item(check: ElementCheck) -> ElementCheck:
    """Lift an element check to list arrays: a row is bad if any of its items is."""
    def lifted(lists: pa.Array) -> pa.Array:
        items = pc.list_flatten(lists)
        bad_items = pc.fill_null(check(items), False)
        parents = pc.filter(pc.list_parent_indices(lists), bad_items)
        return pc.is_in(pa.array(range(len(lists)), type=pa.int64()),
                        value_set=pc.cast(parents, pa.int64()))
    return lifted


def _bad_rows(col: pa.ChunkedArray, check: ElementCheck) -> list[int]:
    rows: list[int] = []
    offset = 0
    for chunk in col.chunks:
        if len(chunk) and chunk.null_count < len(chunk):
            mask = pc.fill_null(check(chunk), False)
            if pc.any(mask).as_py():
                found = pc.indices_nonzero(mask).to_pylist()
                rows += [offset + i for i in found]
        offset += len(chunk)
    return rows


def _as_text(values: pa.ChunkedArray) -> list[str]:
    """Values as text without going through Python objects (which cannot hold them)."""
    if pa.types.is_date(values.type) or pa.types.is_timestamp(values.type):
        return [str(v) for v in pc.cast(values, pa.string()).to_pylist()]
    if pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        item = values.type.value_type
        if pa.types.is_date(item) or pa.types.is_timestamp(item):
            return [str(v) for v in pc.cast(values, pa.list_(pa.string())).to_pylist()]
    return [repr(v) for v in values.to_pylist()]
