"""The order a listing returns rows in: by key unless asked otherwise.

Listings (`Snapshot.read`, so `g.nodes` / `g.edges`, `graphlake show`, `graphlake
export TYPE`) return rows ordered by `id` (a node's key, an edge's id) by default, the
order HTTP and the web UI page in, so an updated row does not move to the end.
`order_by` names other columns: `"age"`, `"-age"` (descending), `"age,-name"` or a list
of such names; nulls come last. `None` asks for storage order, the fastest (no sort) and
the one for bulk reads. Lance sorts (`order_by` on its scanner; a top-k with a limit),
see the "Performance" section of the README for the cost.
"""

from __future__ import annotations

from collections.abc import Sequence

from lance.dataset import ColumnOrdering

from graphlake.errors import UnknownPropertyError

KEY_ORDER = "id"

OrderBy = str | Sequence[str] | None


def order_names(order_by: OrderBy) -> list[str]:
    """`"age,-name"` or `["age", "-name"]` -> `["age", "-name"]` (blanks dropped)."""
    if order_by is None:
        return []
    items = order_by.split(",") if isinstance(order_by, str) else list(order_by)
    return [item.strip() for item in items if item.strip()]


def lance_ordering(
    order_by: OrderBy, table: str, names: Sequence[str]
) -> list[ColumnOrdering] | None:
    """Lance's orderings for `order_by` over a table with columns `names`; None: storage
    order. An unknown column is an `UnknownPropertyError` naming the known ones."""
    wanted = order_names(order_by)
    if not wanted:
        return None
    out = []
    for item in wanted:
        column, ascending = (item[1:].strip(), False) if item.startswith("-") else (item, True)
        if column not in names:
            raise UnknownPropertyError(
                f"{table} has no column {column!r} to order by (columns: {', '.join(names)})"
            )
        out.append(ColumnOrdering(column, ascending=ascending, nulls_first=False))
    return out


def sort_columns(ordering: Sequence[ColumnOrdering] | None) -> list[str]:
    """The columns an ordering reads (Lance needs them in the projection)."""
    return [o.column_name for o in ordering or ()]
