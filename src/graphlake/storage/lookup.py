"""Keyed reads against one pinned dataset: few keys go through the BTREE index, many scan.

The cut-over keeps a one-row write O(1) in table size (index probe) while a bulk write
of a million keys does one narrow scan instead of a million probes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake import probes

# Up to this many values, probe with `column IN (...)` in chunks (uses the index).
PROBE_LIMIT = 20_000
CHUNK = 4_096


def rows_where_in(
    ds: lance.LanceDataset,
    column: str,
    values: Sequence[Any] | pa.Array,
    columns: Sequence[str] | None = None,
    *,
    distinct: bool = False,
) -> pa.Table:
    """Rows of `ds` whose `column` is one of `values`, projected to `columns` (None: all).

    `distinct=True`: the caller has checked that `values` hold no duplicates, so they are
    not hashed again here (~25 ms per 100k strings).
    """
    field = ds.schema.field(column)
    if isinstance(values, pa.ChunkedArray) and values.type == field.type:
        values = values.combine_chunks()  # the same values, without a Python list
    arr = values if isinstance(values, pa.Array) else pa.array(list(values), type=field.type)
    if arr.type != field.type:
        arr = arr.cast(field.type)
    proj = None if columns is None else list(dict.fromkeys([*columns, column]))
    if len(arr) > PROBE_LIMIT and ds.count_rows() == 0:
        # Nothing can match (a bulk load into an empty table): skip hashing the values.
        return _empty(ds, proj)
    if arr.null_count:
        arr = arr.drop_null()
    if len(arr) and not distinct:
        arr = pc.unique(arr)
    if len(arr) == 0:
        return _empty(ds, proj)
    if len(arr) <= PROBE_LIMIT:
        parts = [
            ds.to_table(columns=proj, filter=pc.field(column).isin(arr.slice(i, CHUNK)))
            for i in range(0, len(arr), CHUNK)
        ]
        found = pa.concat_tables(parts)
        probes.add("lookup_rows", found.num_rows)
        return found
    table = ds.to_table(columns=proj)
    probes.add("lookup_rows", table.num_rows)
    probes.add("lookup_scans")
    return _where_in(table, column, arr)


def _where_in(table: pa.Table, column: str, arr: pa.Array) -> pa.Table:
    """The rows of `table` whose `column` is in `arr` (non-empty, no nulls).

    Hashing every scanned value (`is_in`) is most of a bulk check's cost, and it grows
    with the branch. For types whose order agrees with equality, a range test against
    [min(arr), max(arr)] first (a comparison a row, several times cheaper than a hash
    probe) leaves only the rows inside the range to hash: all of them for random keys,
    none for a batch of ascending keys (sequence numbers, ULIDs, time-ordered ids) that
    lies past what the branch already holds, as each commit of a bulk load does. Exact:
    a value outside the range cannot be in `arr`.
    """
    col = table.column(column)
    if not _ordered(col.type) or table.num_rows == 0:
        return table.filter(pc.is_in(col, value_set=arr))
    bounds = pc.min_max(arr)
    inside = pc.and_(pc.greater_equal(col, bounds["min"]), pc.less_equal(col, bounds["max"]))
    rows = pc.indices_nonzero(inside)
    if len(rows) == 0:
        return table.take(rows)  # hashing `arr` alone costs ~10 ms per 100k strings
    inner = col.take(rows)
    if len(inner) < len(arr):
        # Hash the smaller side: the values of `arr` among the rows in range, then the
        # rows holding one of those.
        found = arr.filter(pc.is_in(arr, value_set=inner))
        if len(found) == 0:
            return table.take(rows.slice(0, 0))
        hits = pc.is_in(inner, value_set=found)
    else:
        hits = pc.is_in(inner, value_set=arr)
    return table.take(rows.filter(hits))


def _ordered(t: pa.DataType) -> bool:
    """Types whose comparison order is total and agrees with `is_in`'s equality (not
    floats: NaN is equal to NaN in `is_in` but not inside any range)."""
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_integer(t)
    )


def present_values(
    ds: lance.LanceDataset,
    column: str,
    values: Sequence[Any] | pa.Array,
    *,
    distinct: bool = False,
) -> set[Any]:
    """Which of `values` occur in `column` (`distinct`: as for `rows_where_in`)."""
    found = rows_where_in(ds, column, values, [column], distinct=distinct)
    return set(found.column(column).to_pylist())


def _empty(ds: lance.LanceDataset, columns: list[str] | None) -> pa.Table:
    schema = ds.schema
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    return schema.empty_table()
