"""Names, values and prepared parameters as SQL text.

`ident` quotes a name and `literal` a value of the query (through `graphlake.sqltext`,
the one place that doubles quotes); a parameter's value never enters the text: it is a
DuckDB prepared parameter `$glp_N`, cast to the type its literal would have had.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable

from graphlake import sqltext

__all__ = [
    "ident",
    "literal",
    "mentions",
    "param",
    "param_name",
    "param_names",
    "struct_type",
]

ident = sqltext.ident
_PARAM = re.compile(r"\$(glp_\d+)\b")


def literal(value: object) -> str:
    """`value` as a DuckDB literal (a parameter's value, or a literal of the query)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"{value}::BIGINT" if -(2**63) <= value < 2**63 else f"{value}::HUGEINT"
    if isinstance(value, float):
        return f"'{value}'::DOUBLE" if not math.isfinite(value) else f"{value!r}::DOUBLE"
    if isinstance(value, str):
        return sqltext.string_literal(value)
    if isinstance(value, dt.datetime):
        kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
        return f"{kind} '{value.isoformat()}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "NULL"
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no literal for {type(value).__name__}")


def param_name(index: int) -> str:
    """The prepared parameter name of a query's `index`-th distinct parameter."""
    return f"glp_{index}"


def param(name: str, cast: str | None) -> str:
    """A prepared parameter, cast to `cast` (a DuckDB type) unless None."""
    return f"CAST(${name} AS {cast})" if cast else f"${name}"


def param_names(sql: str) -> set[str]:
    """The prepared parameters `sql` names."""
    return set(_PARAM.findall(sql))


def struct_type(fields: Iterable[tuple[str, str]]) -> str:
    """A DuckDB STRUCT type of (field name, type) pairs."""
    return "STRUCT(" + ", ".join(f"{ident(k)} {t}" for k, t in fields) + ")"


def mentions(sql: str, table: str) -> bool:
    """Whether `sql` names the table `table` (as `ident` writes it)."""
    return ident(table) in sql
