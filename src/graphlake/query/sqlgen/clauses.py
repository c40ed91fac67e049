"""The steps of the planner's statement, one per clause, over the rows of the step
before (`source`, read as `__p`): each carries `1 AS __unit` and one column per variable.

`match` joins a MATCH's FROM items to the rows so far; `optional_match` numbers the rows
(`numbered`), matches over them and left-joins the result back, so a row without a
match stays with its new variables null; `unwind` unnests a list; `projection` is WITH
or RETURN (grouping, sorting, paging, then its WHERE); `on_rows` reads a MATCH's bindings
registered under a table name instead of matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graphlake.query.sqlgen.quote import ident
from graphlake.query.sqlgen.select import UNIT, derived, named, of, page, select

__all__ = [
    "START",
    "carried",
    "match",
    "numbered",
    "on_rows",
    "optional_match",
    "order_column",
    "projection",
    "unwind",
]

START = f"SELECT {UNIT}"  # the one empty row every query starts from


def carried(variables: Iterable[str]) -> list[str]:
    """The columns a step keeps from the one before: the unit and each variable."""
    return [UNIT, *(ident(v) for v in variables)]


def _items(source: str, items: Sequence[str]) -> str:
    return ", ".join([f"{source} AS __p", *items])


def match(
    source: str,
    variables: Iterable[str],
    new: Sequence[str],
    items: Sequence[str],
    conditions: Sequence[str],
) -> str:
    """A MATCH: the rows so far joined with the pattern's FROM `items`; `new` are the
    columns of the variables it binds (`named`)."""
    return select([*carried(variables), *new], _items(source, items), conditions)


def on_rows(source: str, variables: Iterable[str], table: str, condition: str | None) -> str:
    """A MATCH whose rows (one column per variable it binds) are registered as `table`."""
    conditions = [condition] if condition is not None else []
    return select(carried(variables), f"{source} AS __p, {table}", conditions)


def numbered(source: str) -> str:
    """The rows of `source` numbered (`__row`), for an OPTIONAL MATCH to join back to."""
    return f"SELECT row_number() OVER () AS __row, * FROM {source}"


def optional_match(
    source: str,
    kept: Iterable[str],
    bound: Iterable[str],
    new: Sequence[str],
    items: Sequence[str],
    conditions: Sequence[str],
) -> str:
    """An OPTIONAL MATCH over the numbered rows `source`: each keeps its `kept`
    variables, with the `bound` ones (columns `new`) of its matches, or nulls."""
    inner = select(["__p.__row", UNIT, *new], _items(source, items), conditions)
    columns = [UNIT, *(of("__o", v) for v in kept), *(of("__m", v) for v in bound)]
    joined = f"{source} AS __o LEFT JOIN {derived(inner, '__m')} ON __m.__row = __o.__row"
    return select(columns, joined)


def unwind(source: str, variables: Iterable[str], items: str, name: str) -> str:
    """UNWIND: each row of `source` once per item of the list `items`, as `name`."""
    return select([*carried(variables), named(f"unnest({items})", name)], f"{source} AS __p")


def order_column(index: int) -> str:
    """The name of an aggregate ORDER BY sorts by that the projection does not list."""
    return f"__order{index}"


def projection(
    source: str,
    columns: Sequence[str],
    *,
    distinct: bool,
    grouped: bool,
    names: Sequence[str],
    keys: Sequence[str],
    limit: int | None,
    offset: int | None,
    condition: str | None,
) -> str:
    """WITH or RETURN: `columns` of the rows of `source` (grouped by the non-aggregates
    when `grouped`), sorted by `keys` (`sort_key`), paged, then filtered by `condition`
    (WITH's WHERE). A grouped projection is sorted outside the grouping, keeping its
    `names`: there a node or relationship it keeps is a column, so `a.name` reads its
    field (inside, DuckDB binds `a` to the ungrouped input column)."""
    sql = select(columns, f"{source} AS __p", distinct=distinct)
    if grouped:
        sql += " GROUP BY ALL"
        if keys:
            sql = select([ident(n) for n in names], derived(sql, "__g"))
    if keys:
        sql += " ORDER BY " + ", ".join(keys)
    sql += page(limit, offset)
    if condition is not None:
        sql = select(["*"], derived(sql, "__q"), [condition])
    return sql
