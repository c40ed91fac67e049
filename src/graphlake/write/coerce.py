"""Turn caller rows (dicts, Arrow, pandas) into Arrow tables of a table type's schema.

Type errors name the table, property and offending value. Partial rows (for update and
upsert) keep only the columns they provide; full rows (insert) fill absent nullable
properties with nulls and refuse absent non-nullable ones.

One set of rules for every container (dicts, JSONL, Arrow, pandas): a value must already
have its property's type. Arrow columns may differ only in width or layout, never in
kind (an integer column for an I32, a float column for an F64, a list for a Vector);
text for a Date or DateTime is ISO, text for a Blob is base64, as in dicts. Anything else
(`6` for a String, `"3.5"` for an F64) is a `TypeMismatchError`, unless the caller asks
for `coerce=True`: then Arrow's safe casts convert it (a lossy cast still fails).

A `Blob` is bytes; given as text (a str, or an Arrow string column) it is base64, on
every path: JSON has no bytes, and reads over the API and the CLI's `--json` show blobs
as base64, so a row read there and written back is unchanged.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from ulid import ULID

from graphlake.constraints.domain import DATE_KINDS, domain_kind, domain_violations
from graphlake.errors import (
    DataError,
    NullValueError,
    TypeMismatchError,
    UnknownPropertyError,
    ValueConstraintError,
)
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.keys import key_string
from graphlake.schema.model import INTEGER_KINDS, NUMERIC_KINDS, EdgeType, NodeType, TypeRef
from graphlake.write.validate import value_error

_ARROW_ERRORS = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    TypeError,
    ValueError,
    OverflowError,
)


def to_arrow_input(rows: Any) -> pa.Table | list[Mapping[str, Any]]:
    """Normalise the accepted row containers: list of dicts stays, the rest become Arrow."""
    if isinstance(rows, pa.Table):
        return rows
    if isinstance(rows, pa.RecordBatch):
        return pa.Table.from_batches([rows])
    if _is_pandas(rows):
        return pa.Table.from_pandas(rows, preserve_index=False)
    if isinstance(rows, Mapping):
        return [rows]
    if isinstance(rows, Iterable) and not isinstance(rows, str | bytes):
        out = list(rows)
        for i, r in enumerate(out):
            if not isinstance(r, Mapping):
                raise DataError(f"row {i} is a {type(r).__name__}, expected a dict")
        return out
    raise DataError(
        f"rows must be a list of dicts, a pyarrow Table/RecordBatch or a pandas DataFrame, "
        f"not {type(rows).__name__}"
    )


def _is_pandas(obj: Any) -> bool:
    return type(obj).__module__.startswith("pandas") and hasattr(obj, "to_dict")


def physical_columns(t: NodeType | EdgeType) -> tuple[str, ...]:
    return ("id", "src", "dst") if t.is_edge else ("id",)


def coerce(t: NodeType | EdgeType, rows: Any, *, partial: bool, cast: bool = False) -> pa.Table:
    """Rows as an Arrow table of `t`'s schema (only provided columns when `partial`).

    `cast` (the public `coerce=True`) converts values of another type with Arrow's safe
    casts; by default they are a `TypeMismatchError`.

    The `id` column is always present: the key's string form for nodes, the given or a
    generated ULID for edges (edge ids may only be omitted when not `partial`).
    """
    data = to_arrow_input(rows)
    schema = arrow_schema(t)
    if isinstance(data, pa.Table):
        columns = {name: data.column(name) for name in data.column_names}
        n = data.num_rows
    else:
        columns = _columns_from_dicts(t, data)
        n = len(data)
    allowed = set(schema.names)
    for name in columns:
        if name not in allowed:
            raise UnknownPropertyError(
                f"{t.name} has no property {name!r} (declared: {', '.join(t.property_names)})"
            )
    if not t.is_edge:
        columns.pop("id", None)  # a node's id is derived from its key, never given
    out: dict[str, pa.ChunkedArray | pa.Array] = {}
    for field in schema:
        if field.name == "id":
            continue
        if field.name in columns:
            out[field.name] = _cast(t, field, columns[field.name], cast)
        elif not partial:
            prop = t.property(field.name)
            if prop is not None and prop.default is not None:  # `@default(value)`
                out[field.name] = pa.array([prop.default] * n, field.type)
                continue
            if not field.nullable and not (t.is_edge and field.name == "id"):
                raise NullValueError(f"{t.name}.{field.name} is required but missing")
            out[field.name] = pa.nulls(n, field.type)
    out = {"id": _ids(t, columns, out, n, partial), **out}
    names = [f.name for f in schema if f.name in out]
    table = pa.table(
        {name: out[name] for name in names},
        schema=pa.schema([schema.field(name) for name in names], metadata=schema.metadata),
    )
    _check_not_null(t, table, partial)
    _check_not_empty(t, table)
    _check_dates(t, table)
    return table


def _columns_from_dicts(
    t: NodeType | EdgeType, rows: list[Mapping[str, Any]]
) -> dict[str, list[Any]]:
    names: dict[str, None] = {}
    for r in rows:
        for k in r:
            names.setdefault(k, None)
    missing = object()
    cols: dict[str, list[Any]] = {}
    for name in names:
        values = [r.get(name, missing) for r in rows]
        if any(v is missing for v in values) and name in physical_columns(t):
            values = [None if v is missing else v for v in values]
        elif any(v is missing for v in values):
            # A partial column in dict rows: absent means "not provided" for updates, null
            # (or the property's `@default`) for inserts. Updates group rows by the keys
            # they give (`Transaction._groups`), so they never get here.
            prop = t.property(name)
            fill = prop.default if prop is not None else None
            values = [fill if v is missing else v for v in values]
        cols[name] = values
    return cols


def _cast(t: NodeType | EdgeType, field: pa.Field, values: Any, cast: bool = False) -> pa.Array:
    prop = t.property(field.name)
    ty = prop.type if prop else None
    try:
        if isinstance(values, pa.ChunkedArray | pa.Array):
            arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
            if arr.type.equals(field.type):
                return arr
            if _read_as_python(ty, arr.type):
                values = arr.to_pylist()  # ISO dates, base64 blobs, numeric keys: as dicts
            elif cast or same_kind(arr.type, field.type):
                return pc.cast(arr, field.type, safe=True)
            else:
                raise _wrong_arrow_type(t, field, ty, arr.type)
        try:
            return pa.array(_prepare(ty, values), type=field.type)
        except _ARROW_ERRORS:
            if not cast:
                raise
            return pc.cast(pa.array(values), field.type, safe=True)
    except _ARROW_ERRORS as exc:
        raise _mismatch(t, field, ty, values, exc) from None


def same_kind(given: pa.DataType, wanted: pa.DataType) -> bool:
    """Can a column of `given` stand for `wanted` without changing what its values mean?

    Only width and layout may differ (int64 for int32, which still fails on overflow;
    large_string for string; a list for a fixed-size list); integers may stand for floats,
    as Python ints do in dict rows. Text never stands for a number, nor a number for text.
    """
    if pa.types.is_null(given):
        return True
    if pa.types.is_dictionary(given):  # pandas categoricals
        return same_kind(given.value_type, wanted)
    for is_kind in (
        pa.types.is_integer,
        pa.types.is_floating,
        pa.types.is_boolean,
        _is_text,
        _is_bytes,
        pa.types.is_date,
        pa.types.is_timestamp,
    ):
        if is_kind(wanted):
            return is_kind(given) or (pa.types.is_floating(wanted) and pa.types.is_integer(given))
    if _is_list(wanted):
        return _is_list(given) and same_kind(given.value_type, wanted.value_type)
    return False


def _is_text(ty: pa.DataType) -> bool:
    return pa.types.is_string(ty) or pa.types.is_large_string(ty)


def _is_bytes(ty: pa.DataType) -> bool:
    return (
        pa.types.is_binary(ty) or pa.types.is_large_binary(ty) or pa.types.is_fixed_size_binary(ty)
    )


def _is_list(ty: pa.DataType) -> bool:
    return pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_fixed_size_list(ty)


def _wrong_arrow_type(
    t: NodeType | EdgeType, field: pa.Field, ty: TypeRef | None, given: pa.DataType
) -> TypeMismatchError:
    expected = str(ty) if ty is not None else "a key (string)"
    return TypeMismatchError(
        f"{t.name}.{field.name}: expected {expected} (Arrow {field.type}), got a column of "
        f"Arrow type {given}; convert it, or pass coerce=True to cast it"
    )


def _prepare(ty: TypeRef | None, values: list[Any]) -> list[Any]:
    """Accept ISO strings for dates and timestamps and base64 text for blobs; refuse bools
    posing as numbers."""
    if ty is None:  # src / dst / id: keys may be given as numbers
        return [None if v is None else key_string(v) for v in values]
    if ty.kind == "Blob":
        return [_blob(v) for v in values]
    if ty.kind == "Date":
        return [dt.date.fromisoformat(v) if isinstance(v, str) else v for v in values]
    if ty.kind == "DateTime":
        return [_parse_datetime(v) if isinstance(v, str) else v for v in values]
    if ty.kind in NUMERIC_KINDS:
        integer = ty.kind in INTEGER_KINDS
        for v in values:
            if isinstance(v, bool | str) or (integer and isinstance(v, float)):
                raise TypeError(f"{v!r} is not {'an integer' if integer else 'a number'}")
    if ty.kind == "String" or ty.kind == "Enum":
        for v in values:
            if v is not None and not isinstance(v, str):
                raise TypeError(f"{v!r} is not a string")
    return values


def _read_as_python(ty: TypeRef | None, given: pa.DataType) -> bool:
    """Does a column of `given` follow the dict rules rather than Arrow's? Text for a
    Blob (base64), a Date or a DateTime (ISO), and integers or dates for a key column
    (`id`, `src`, `dst`: `ty` is None), which dict rows may give as numbers."""
    if ty is None:
        return pa.types.is_integer(given) or pa.types.is_date(given)
    return ty.kind in ("Blob", "Date", "DateTime") and _is_text(given)


def _blob(v: Any) -> Any:
    """Text given for a Blob as its bytes (strict base64: no stray characters)."""
    if not isinstance(v, str):
        return v  # bytes (or a wrong type, which Arrow then refuses)
    try:
        return base64.b64decode(v.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise TypeError(f"{v[:40]!r} is not base64") from None


def _parse_datetime(v: str) -> dt.datetime:
    d = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=dt.UTC)


def _mismatch(
    t: NodeType | EdgeType, field: pa.Field, ty: TypeRef | None, values: Any, exc: Exception
) -> TypeMismatchError:
    expected = str(ty) if ty is not None else "a key (string)"
    if ty is not None and ty.kind == "Blob":
        expected += " (bytes, or text in base64)"
    bad = _first_bad(field, ty, values)
    got = f"got {bad!r}" if bad is not _NONE else f"({exc})"
    return TypeMismatchError(f"{t.name}.{field.name}: expected {expected}, {got}")


_NONE = object()


def _first_bad(field: pa.Field, ty: TypeRef | None, values: Any) -> Any:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        values = values.to_pylist()
    for v in values:
        try:
            pa.array(_prepare(ty, [v]), type=field.type)
        except _ARROW_ERRORS:
            return v
    return _NONE


def _ids(
    t: NodeType | EdgeType,
    given: dict[str, Any],
    out: dict[str, Any],
    n: int,
    partial: bool,
) -> pa.Array:
    if isinstance(t, NodeType):
        key = out.get(t.key)
        if key is None:
            raise NullValueError(f"{t.name}.{t.key} (the key) is required")
        if key.null_count:
            raise NullValueError(f"{t.name}.{t.key} (the key) may not be null")
        return pc.cast(key, pa.string())
    ids = given.get("id")
    if ids is None:
        if partial:
            raise NullValueError(f"{t.name}: edge rows need an `id` for this operation")
        return pa.array([str(ULID()) for _ in range(n)], type=pa.string())
    arr = _cast(t, pa.field("id", pa.string()), ids)
    if arr.null_count:
        if partial:
            raise NullValueError(f"{t.name}: edge rows need an `id` for this operation")
        filled = [v if v is not None else str(ULID()) for v in arr.to_pylist()]
        arr = pa.array(filled, type=pa.string())
    return arr


def _check_not_empty(t: NodeType | EdgeType, table: pa.Table) -> None:
    """Refuse an empty string as a node key, edge id or endpoint.

    "" is no identity: it reads as a missing value everywhere a key is shown (logs,
    diffs, conflicts, URLs), and an edge naming it as an endpoint can only point at a
    node no one meant to create. Only "" itself: a key of spaces or one holding a NUL
    round-trips like any other string, and `@check` on the key can refuse those.
    Every write (insert, upsert, update, overwrite; load and ingest stage rows through
    them) comes here; `delete` does not, so a "" written before this check can go.
    """
    for column in physical_columns(t):
        if column not in table.column_names:
            continue  # a partial row (an edge update) that does not move its endpoints
        # A count, not row numbers: load and partial writes regroup the caller's rows.
        n = pc.sum(pc.equal(table.column(column), "")).as_py() or 0
        if n:
            what = _EDGE_KEYS[column] if isinstance(t, EdgeType) else f"{t.key} (the key)"
            raise ValueConstraintError(
                f"{t.name}.{what} may not be the empty string "
                f"({n} row{'s' if n > 1 else ''} of this write)"
            )


def _check_dates(t: NodeType | EdgeType, table: pa.Table) -> None:
    """Refuse dates Python cannot represent (Arrow input can carry them) here, before
    anything turns rows into Python values: resolving an upsert or update does, and would
    crash on them long before validation (which checks them again, for merges and fsck)."""
    found = [
        v
        for prop in t.properties
        if prop.name in table.column_names and domain_kind(prop.type) in DATE_KINDS
        for v in domain_violations(t.name, prop, table.column(prop.name), table.column("id"))
    ]
    if found:
        raise value_error(t.name, found)


_EDGE_KEYS = {
    "id": "id (the edge id; omit it to have one generated)",
    "src": "src (the source node's key)",
    "dst": "dst (the destination node's key)",
}


def _check_not_null(t: NodeType | EdgeType, table: pa.Table, partial: bool) -> None:
    for field in table.schema:
        if field.nullable or field.name == "id":
            continue
        col = table.column(field.name)
        if col.null_count:
            ids = table.column("id").filter(pc.is_null(col)).to_pylist()[:5]
            raise NullValueError(
                f"{t.name}.{field.name} may not be null (rows {', '.join(map(str, ids))})"
            )
