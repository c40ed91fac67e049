"""SQL text: the one place that quotes identifiers and string literals for DuckDB.

Every SQL string graphlake builds quotes names with `ident` and text values with
`string_literal`; nothing else doubles quotes by hand (`tests/core/test_sql_quoting.py`
fails on a copy). DuckDB follows the SQL standard here: an identifier is wrapped in
double quotes with `"` doubled, a string literal in single quotes with `'` doubled, and
neither has other escapes, so the doubled forms are complete.
"""

from __future__ import annotations

__all__ = ["ident", "string_literal"]


def ident(name: str) -> str:
    """`name` as a quoted identifier: `a"b` -> `"a""b"`."""
    return '"' + name.replace('"', '""') + '"'


def string_literal(value: str) -> str:
    """`value` as a string literal: `it's` -> `'it''s'`."""
    return "'" + value.replace("'", "''") + "'"
