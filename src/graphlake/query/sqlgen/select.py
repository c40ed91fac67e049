"""Statement pieces: select lists, FROM and WHERE, derived tables, EXISTS, ORDER BY and
paging, the CTE list (`WITH RECURSIVE`) and row counts.

Names given as `str` are quoted here (`ident`) unless a parameter says it is SQL already
(`sql`, `source`: an expression or FROM item another builder wrote) or an internal name
the compiler made (`alias`: `__p`, `s3`, `__walk2`, ...: no quoting needed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graphlake.query.sqlgen.quote import ident

__all__ = [
    "FALSE",
    "UNIT",
    "bounded",
    "column",
    "count_all",
    "count_of",
    "count_rows",
    "cte",
    "derived",
    "exists",
    "named",
    "of",
    "page",
    "select",
    "sort_key",
    "where",
    "with_ctes",
]

UNIT = "1 AS __unit"  # the column every step has (so a step with no variables has one)
FALSE = "FALSE"  # a condition no row meets


def column(name: str) -> str:
    """The column `name` (a variable or a projected name)."""
    return ident(name)


def named(sql: str, name: str) -> str:
    """`sql AS "name"`: an expression or FROM item under a quoted name."""
    return f"{sql} AS {ident(name)}"


def of(alias: str, name: str) -> str:
    """The column `name` of the internal alias `alias` (`__o."a"`)."""
    return f"{alias}.{ident(name)}"


def where(conditions: Sequence[str]) -> str:
    """` WHERE a AND b`, or nothing for no conditions."""
    return f" WHERE {' AND '.join(conditions)}" if conditions else ""


def select(
    columns: Iterable[str], source: str, conditions: Sequence[str] = (), distinct: bool = False
) -> str:
    """`SELECT [DISTINCT] columns FROM source [WHERE conditions]`."""
    head = "SELECT DISTINCT " if distinct else "SELECT "
    return f"{head}{', '.join(columns)} FROM {source}{where(conditions)}"


def derived(sql: str, alias: str) -> str:
    """A subquery as a FROM item: `(sql) AS alias`."""
    return f"({sql}) AS {alias}"


def exists(items: Sequence[str], conditions: Sequence[str]) -> str:
    """A correlated `EXISTS` over FROM `items` (none: one row) and `conditions`."""
    source = ", ".join(items) or "(SELECT 1) AS __one"
    return f"EXISTS (SELECT 1 FROM {source}{where(conditions)})"


def sort_key(sql: str, descending: bool) -> str:
    """An ORDER BY key; openCypher sorts null after every value: last going up, first
    going down."""
    return f"{sql} {'DESC NULLS FIRST' if descending else 'ASC NULLS LAST'}"


def page(limit: int | None, offset: int | None) -> str:
    """` LIMIT n OFFSET m`, each part only when given."""
    out = ""
    if limit is not None:
        out += f" LIMIT {limit}"
    if offset is not None:
        out += f" OFFSET {offset}"
    return out


def cte(name: str, sql: str, columns: Sequence[str] = (), key: Sequence[str] = ()) -> str:
    """One CTE of a `WITH RECURSIVE` list: `name[(columns)] [USING KEY (key)] AS (sql)`."""
    head = name
    if columns:
        head += "(" + ", ".join(columns) + ")"
        if key:
            head += " USING KEY (" + ", ".join(key) + ")"
    return f"{head} AS ({sql})"


def with_ctes(ctes: Sequence[str], body: str) -> str:
    """`body` after its CTEs (`cte`), if any."""
    return ("WITH RECURSIVE " + ", ".join(ctes) + " " if ctes else "") + body


def count_rows(name: str) -> str:
    """The number of rows of the relation `name` (a CTE's generated name), as `n`."""
    return f"SELECT count(*) AS n FROM {name}"


def count_of(sql: str) -> str:
    """The number of rows `sql` returns, as `n`."""
    return f"SELECT count(*) AS n FROM ({sql}) AS __c"


def count_all(table: str) -> str:
    """The number of rows of the registered table `table` (an internal name)."""
    return f"SELECT count(*) FROM {table}"


def bounded(sql: str, rows: int) -> str:
    """At most `rows` rows of a user's SELECT `sql`: on lines of their own, so a trailing
    `-- comment` in it cannot swallow the wrapper."""
    return f"SELECT * FROM (\n{sql}\n) AS _data_check LIMIT {rows}"
