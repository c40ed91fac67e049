"""Float32 values as the numbers they were written as, for everything that shows them.

A float32 `0.122` is stored as the float32 nearest to it; widened to a Python float (a
float64) it reads `0.12200000137090683`. `shortest_floats` returns a table whose float32
columns (also inside lists, fixed-size lists such as vectors, and structs) are float64
columns holding the shortest decimal that round-trips the stored float32 (`0.122`), the
digits `repr(numpy.float32(x))` prints. Converting back to float32 gives the same bits,
so a row read this way can be written back unchanged. Vectorised in Arrow (a cast to
text and back); NaN, infinities and nulls stay what they are.

Every place that turns Arrow values into JSON or text (the CLI's tables and `--json`,
export CSV/JSONL, HTTP and the web UI) converts through this one function; rows already
turned into Python values (diff rows, merge conflict rows) through `shortest_rows`, the
same rule on the column's type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import pyarrow as pa

T = TypeVar("T", pa.Table, pa.RecordBatch)


def shortest_floats(data: T) -> T:
    """`data` with every float32 widened to the float64 of its shortest decimal form."""
    schema = data.schema
    if not any(_has_float32(f.type) for f in schema):
        return data
    fields = [f.with_type(_widened(f.type)) for f in schema]
    columns = [_widen(data.column(i), f.type) for i, f in enumerate(fields)]
    new_schema = pa.schema(fields, metadata=schema.metadata)
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(columns, schema=new_schema)
    return pa.Table.from_arrays(columns, schema=new_schema)


def shortest_rows(
    rows: Sequence[dict[str, Any] | None], types: Mapping[str, pa.DataType]
) -> list[dict[str, Any] | None]:
    """Rows of Python values (as `to_pylist` gives them, e.g. a diff's or a conflict's)
    with every value of a float32 column in `types` (name -> the column's Arrow type,
    float32 also inside lists, vectors and structs) replaced by its shortest decimal, as
    `shortest_floats` does for tables. Other columns, missing ones and None rows stay;
    a column whose values do not fit its type is left as it is. New dicts; `rows` is
    not changed."""
    out = [None if r is None else dict(r) for r in rows]
    for name, ty in types.items():
        if not _has_float32(ty):
            continue
        at = [i for i, r in enumerate(out) if r is not None and r.get(name) is not None]
        if not at:
            continue
        try:
            column = pa.array([out[i][name] for i in at], type=ty)  # type: ignore[index]
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            continue
        for i, value in zip(at, _widen(column, _widened(ty)).to_pylist(), strict=True):
            out[i][name] = value  # type: ignore[index]
    return out


def shortest_schema(schema: pa.Schema) -> pa.Schema:
    """The schema `shortest_floats` turns `schema` into."""
    return pa.schema([f.with_type(_widened(f.type)) for f in schema], metadata=schema.metadata)


def _has_float32(ty: pa.DataType) -> bool:
    if pa.types.is_float32(ty):
        return True
    if pa.types.is_list(ty) or pa.types.is_large_list(ty) or pa.types.is_fixed_size_list(ty):
        return _has_float32(ty.value_type)
    if pa.types.is_struct(ty):
        return any(_has_float32(ty.field(i).type) for i in range(ty.num_fields))
    return False


def _widened(ty: pa.DataType) -> pa.DataType:
    """`ty` with every float32 replaced by float64."""
    return _replaced(ty, pa.float64())


def _text(ty: pa.DataType) -> pa.DataType:
    """`ty` with every float32 replaced by string (Arrow prints the shortest form)."""
    return _replaced(ty, pa.string())


def _replaced(ty: pa.DataType, leaf: pa.DataType) -> pa.DataType:
    """`ty` with every float32 inside it (lists, vectors, structs) replaced by `leaf`."""
    if pa.types.is_float32(ty):
        return leaf
    if pa.types.is_fixed_size_list(ty):
        return pa.list_(ty.value_field.with_type(_replaced(ty.value_type, leaf)), ty.list_size)
    if pa.types.is_list(ty):
        return pa.list_(ty.value_field.with_type(_replaced(ty.value_type, leaf)))
    if pa.types.is_large_list(ty):
        return pa.large_list(ty.value_field.with_type(_replaced(ty.value_type, leaf)))
    if pa.types.is_struct(ty):
        return pa.struct([f.with_type(_replaced(f.type, leaf)) for f in ty])
    return ty


def _widen(column: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    if column.type == target:
        return column
    return column.cast(_text(column.type)).cast(target)
