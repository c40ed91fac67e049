"""Plain JSON values for what Arrow and the library hand back, shared by the CLI's
`--json` output and the HTTP server's bodies (so both print a value the same way).

Light on purpose: nothing here imports pyarrow at module load (the CLI's start-up reads
this module); `table_rows` imports the float formatter when it is called.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["jsonable", "table_rows"]


def jsonable(value: Any) -> Any:
    """Plain JSON values for what Arrow hands back (dates, bytes, decimals, NaN)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as JSON values; float32 values as their shortest decimal (`0.122`)."""
    # on first use only: loads pyarrow, numpy (start-up time)
    from graphlake.read.floats import shortest_floats

    return [jsonable(row) for row in shortest_floats(table).to_pylist()]
