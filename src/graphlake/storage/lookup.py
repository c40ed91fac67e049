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
_CHUNK = 4_096


def rows_where_in(
    ds: lance.LanceDataset,
    column: str,
    values: Sequence[Any] | pa.Array,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """Rows of `ds` whose `column` is one of `values`, projected to `columns` (None: all)."""
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
    arr = pc.unique(arr.drop_null()) if len(arr) else arr
    if len(arr) == 0:
        return _empty(ds, proj)
    if len(arr) <= PROBE_LIMIT:
        parts = [
            ds.to_table(columns=proj, filter=pc.field(column).isin(arr.slice(i, _CHUNK)))
            for i in range(0, len(arr), _CHUNK)
        ]
        found = pa.concat_tables(parts)
        probes.add("lookup_rows", found.num_rows)
        return found
    table = ds.to_table(columns=proj)
    probes.add("lookup_rows", table.num_rows)
    probes.add("lookup_scans")
    return table.filter(pc.is_in(table.column(column), value_set=arr))


def present_values(
    ds: lance.LanceDataset, column: str, values: Sequence[Any] | pa.Array
) -> set[Any]:
    """Which of `values` occur in `column`."""
    return set(rows_where_in(ds, column, values, [column]).column(column).to_pylist())


def _empty(ds: lance.LanceDataset, columns: list[str] | None) -> pa.Table:
    schema = ds.schema
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    return schema.empty_table()
