"""Vectorised fast paths of the checks: exact by construction, or they decline.

Each helper either proves its answer with Arrow (or DuckDB) kernels or says it cannot
(None / False), and the caller then runs the plain, exact Python check.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:  # DuckDB (~0.2 CPU-s to import) loads for large distinct counts only
    import duckdb

# Below this many rows the plain Python loops are cheaper than the vectorised checks.
VECTOR_MIN_ROWS = 1024

# --- distinct counts --------------------------------------------------------------------

# From this many rows, count distinct values with DuckDB (hashes on every core; Arrow's
# `unique` is single-threaded and took ~2x as long on 1M strings on 2 cores).
_DISTINCT_SQL_MIN_ROWS = 100_000
_duck_lock = threading.Lock()
_duck: duckdb.DuckDBPyConnection | None = None


def count_distinct(table: pa.Table, cols: list[str]) -> tuple[int, int]:
    """(rows of `table` without a null in `cols`, distinct `cols` tuples among them)."""
    sub = table.select(cols).rename_columns([f"c{i}" for i in range(len(cols))])
    names = sub.column_names
    if sub.num_rows >= _DISTINCT_SQL_MIN_ROWS:
        # on first use only: loads duckdb (start-up time)
        import duckdb

        global _duck
        with _duck_lock:
            if _duck is None:
                _duck = duckdb.connect()
            cur = _duck.cursor()
        try:
            cur.register("t", sub)
            where = " AND ".join(f"{c} IS NOT NULL" for c in names)
            row = cur.execute(
                f"SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT {', '.join(names)} "
                f"FROM t WHERE {where})) FROM t WHERE {where}"
            ).fetchone() or (0, 0)  # an aggregate always returns its one row
            return int(row[0]), int(row[1])
        except duckdb.Error:
            pass  # a type DuckDB does not take: count with Arrow below
        finally:
            cur.close()
    sub = sub.filter(all_valid(sub, tuple(names)))
    if len(names) == 1:
        return sub.num_rows, len(pc.unique(sub.column(0)))
    return sub.num_rows, sub.group_by(names).aggregate([]).num_rows


def exact_equality(t: pa.DataType) -> bool:
    """True for types whose Arrow equality is Python's (hashing and joins agree)."""
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_date(t)
        or pa.types.is_timestamp(t)
    )


def all_valid(table: pa.Table, cols: tuple[str, ...]) -> pa.ChunkedArray:
    """Mask of rows with no null in `cols`."""
    mask = pc.is_valid(table.column(cols[0]))
    for c in cols[1:]:
        mask = pc.and_(mask, pc.is_valid(table.column(c)))
    return mask
