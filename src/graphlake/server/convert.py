"""Graph values -> JSON. Output reuses the CLI's conversion (dates ISO, bytes base64,
vectors as lists, NaN as null, float32 as its shortest decimal). Input needs no
conversion here: writes take a `Blob` given as text to be base64 on every path
(`graphlake.write.coerce`), so a row read from the API can be written back unchanged
through `/mutations` and `/load` alike."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphlake.read.jsonable import jsonable, table_rows

if TYPE_CHECKING:  # pyarrow loads with the first data request (see app.py)
    import pyarrow as pa

__all__ = ["columns_and_rows", "jsonable", "table_rows"]


def columns_and_rows(table: pa.Table) -> tuple[list[str], list[list[Any]]]:
    """Column names and rows as lists (SQL results may repeat a column name)."""
    # on first use only: loads pyarrow, numpy (start-up time)
    from graphlake.read.floats import shortest_floats

    table = shortest_floats(table)
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = [jsonable(list(r)) for r in zip(*columns, strict=True)] if columns else []
    return list(table.column_names), rows
