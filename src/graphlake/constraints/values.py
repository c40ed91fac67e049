"""Value constraints on rows: enum membership, `@range`, `@check` (full-match regex), and
the type domains of `graphlake.constraints.domain` (finite vectors, representable dates).

`@check` matches with RE2 (`graphlake.regex`): linear in the value's length, over whole
columns, outside the GIL. A stored pattern RE2 refuses (a schema from an older version)
raises `CheckPatternError` naming it whenever a row with a value of its property is
checked."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.constraints.domain import DATE_KINDS, domain_kind, domain_violations
from graphlake.constraints.violation import Violation
from graphlake.errors import CheckPatternError
from graphlake.regex import full_match, pattern_problem
from graphlake.schema.model import Property, TableType


def value_violations(t: TableType, rows: pa.Table) -> list[Violation]:
    """Every enum, range, regex and domain violation in `rows` (complete or partial)."""
    out: list[Violation] = []
    if rows.num_rows == 0:
        return out
    ids = rows.column("id")
    for prop in t.properties:
        if prop.name not in rows.column_names:
            continue
        col = rows.column(prop.name)
        outside = domain_violations(t.name, prop, col, ids)
        out += outside
        enum_type = _enum_type(prop)
        if enum_type is not None:
            out += _enum(t.name, prop.name, col, ids, enum_type.values or (), prop.type.kind)
        rng = t.ranges.get(prop.name)
        if rng is not None and not outside:  # Python cannot show a date outside its domain
            out += _range(t.name, prop.name, col, ids, rng.min, rng.max)
        pattern = t.checks.get(prop.name)
        if pattern is not None:
            out += _regex(t.name, prop.name, col, ids, pattern)
    return out


def value_columns(t: TableType) -> list[str]:
    """The properties `value_violations` must read (enum, range, regex, dates), in schema
    order. Vectors are checked only where the rows carry them (every write, fsck): rows
    an insert-only merge adopts were checked when written, and reading their vectors
    again is the cost `checked_columns` exists to avoid."""
    return [
        prop.name
        for prop in t.properties
        if _enum_type(prop) is not None
        or prop.name in t.ranges
        or prop.name in t.checks
        or domain_kind(prop.type) in DATE_KINDS
    ]


def _enum_type(prop: Property) -> Any:
    enum_type = prop.type if prop.type.kind == "Enum" else prop.type.item
    return enum_type if enum_type is not None and enum_type.kind == "Enum" else None


def _v(table: str, prop: str, key: Any, message: str) -> Violation:
    return Violation("value", table, str(key), message, (prop,))


def _enum(
    table: str,
    name: str,
    col: pa.ChunkedArray,
    ids: pa.ChunkedArray,
    values: tuple[str, ...],
    kind: str,
) -> list[Violation]:
    if kind == "List":
        return [
            _v(table, name, key, f"{name} item {item!r} is not one of {list(values)}")
            for key, items in zip(ids.to_pylist(), col.to_pylist(), strict=True)
            for item in items or ()
            if item is not None and item not in values
        ]
    allowed = pa.array(list(values), type=pa.string())
    bad = pc.and_(pc.is_valid(col), pc.invert(pc.is_in(col, value_set=allowed)))
    return [
        _v(table, name, key, f"{name}={v!r} is not one of {list(values)}")
        for key, v in zip(ids.filter(bad).to_pylist(), col.filter(bad).to_pylist(), strict=True)
    ]


def _range(
    table: str, name: str, col: pa.ChunkedArray, ids: pa.ChunkedArray, lo: Any, hi: Any
) -> list[Violation]:
    # NaN compares false with every bound, so it would pass any range: refuse it outright.
    bad = pc.is_nan(col) if pa.types.is_floating(col.type) else None
    if lo is not None:
        below = pc.less(col, pa.scalar(lo).cast(col.type))
        bad = below if bad is None else pc.or_(bad, below)
    if hi is not None:
        above = pc.greater(col, pa.scalar(hi).cast(col.type))
        bad = above if bad is None else pc.or_(bad, above)
    if bad is None:
        return []
    bad = pc.fill_null(bad, False)
    if not pc.any(bad).as_py():
        return []
    shown = f"{'' if lo is None else lo}..{'' if hi is None else hi}"
    return [
        _v(table, name, key, f"{name}={v!r} is outside @range({shown})")
        for key, v in zip(ids.filter(bad).to_pylist(), col.filter(bad).to_pylist(), strict=True)
    ]


def _regex(
    table: str, name: str, col: pa.ChunkedArray, ids: pa.ChunkedArray, pattern: str
) -> list[Violation]:
    if col.null_count == len(col):  # nothing to match (and maybe no string type)
        return []
    problem = pattern_problem(pattern)
    if problem is not None:
        raise CheckPatternError(
            f'{table}.{name} has @check("{pattern}"), which this version cannot run: '
            f"{problem}. Writes of {table}.{name} fail until a schema change replaces "
            f"the pattern with one in RE2 syntax",
            pattern,
        )
    bad = pc.invert(pc.fill_null(full_match(col, pattern), True))
    if not pc.any(bad).as_py():
        return []
    return [
        _v(table, name, key, f"{name}={v!r} does not match @check({pattern!r})")
        for key, v in zip(ids.filter(bad).to_pylist(), col.filter(bad).to_pylist(), strict=True)
    ]
