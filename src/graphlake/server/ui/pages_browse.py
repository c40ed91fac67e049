"""Browse a table on any revision (filter, columns, paging) and a node with its edges."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from graphlake.errors import QueryError, RowNotFoundError, UnknownPropertyError
from graphlake.server.convert import jsonable, table_rows
from graphlake.server.errors import status_for
from graphlake.server.pages import read_page
from graphlake.server.ui.deps import UiRoute, app_state, require_session
from graphlake.server.ui.pages_search import search_kinds
from graphlake.server.ui.render import render
from graphlake.sqltext import string_literal

router = APIRouter(route_class=UiRoute, include_in_schema=False)

ROWS_PER_PAGE = 50
EDGES_PER_TYPE = 50  # edges in and out per edge type on a node page
HISTORY_ROWS = 20  # commits of a node's row history on its page
Ref = Annotated[str, Query(min_length=1, max_length=1000)]
Text = Annotated[str | None, Query(max_length=4096)]


@router.get("/ui/browse")
def browse(
    request: Request,
    ref: Ref | None = None,
    table: Text = None,
    where: Text = None,
    columns: Text = None,
    cursor: Text = None,
) -> Response:
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    ref = ref or graph.repo.info.default_branch
    schema = graph.schema_at(ref)  # types differ between commits (schema changes)
    table = table or (schema.table_names[0] if schema.table_names else None)
    context: dict[str, Any] = {
        "ref": ref,
        "table": table,
        "where": where or "",
        "columns": columns or "",
        "nodes": list(schema.nodes),
        "edges": list(schema.edges),
        "page": None,
        "kinds": search_kinds(schema.table(table) if table else None),
    }
    if table is not None:
        names = [c.strip() for c in (columns or "").split(",") if c.strip()]
        try:
            with state.reads.hold():  # the same slots and paging as GET .../tables/{table}
                page = read_page(
                    graph,
                    ref,
                    table,
                    where=(where or "").strip() or None,
                    columns=list(dict.fromkeys(names)) or None,
                    limit=ROWS_PER_PAGE,
                    cursor=cursor or None,
                    max_bytes=state.config.limits.sql_max_result_bytes,
                )
        except (QueryError, UnknownPropertyError) as exc:
            # A bad filter or column: the form stays, to be corrected.
            context["problem"] = f"{type(exc).__name__}: {exc}"
            return render(request, "browse.html", session, status=status_for(exc), **context)
        t = schema.table(table)
        context.update(
            page=page,
            rows=table_rows(page.rows),
            header=list(page.rows.column_names),
            all_columns=_columns(t),
            is_edge=bool(t and t.is_edge),
            edge_type=t,
        )
    return render(request, "browse.html", session, **context)


def _columns(t: Any) -> list[str]:
    if t is None:
        return []
    fixed = ["id", "src", "dst"] if t.is_edge else ["id"]
    return fixed + [p.name for p in t.properties]


_literal = string_literal


@router.get("/ui/node")
def node(
    request: Request, table: Ref, id: Annotated[str, Query(max_length=4096)], ref: Ref | None = None
) -> Response:
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    ref = ref or graph.repo.info.default_branch
    from graphlake.read.snapshot import Snapshot  # the data stack loads on use

    snapshot = Snapshot(graph.repo, graph.resolve(ref))
    t = snapshot.type(table, "node")
    with state.reads.hold():
        row = snapshot.get(t.name, id)
        row = jsonable(row) if row is not None else None
        links = []
        for e in snapshot.schema.edges.values():  # the edge types of that commit
            # Only the first EDGES_PER_TYPE + 1 edges are read: the page says when more.
            for side, other, end_type, applies in (
                ("src", "dst", e.dst, e.src == t.name),
                ("dst", "src", e.src, e.dst == t.name),
            ):
                if not applies:
                    continue
                rows = snapshot.read(
                    e.name, "edge", f"{side} = {_literal(id)}", None, EDGES_PER_TYPE + 1
                )
                found = table_rows(rows)
                links.append(
                    {
                        "edge": e.name,
                        "direction": "out" if side == "src" else "in",
                        "other_type": end_type,
                        "other": other,
                        "rows": found[:EDGES_PER_TYPE],
                        "more": len(found) > EDGES_PER_TYPE,
                    }
                )
        # Who set each value, and the commits that changed the row (lineage walks).
        blame = {}
        history: list[Any] = []
        try:
            history = graph.row_history(t.name, id, ref, limit=HISTORY_ROWS + 1)
            if row is not None:
                blame = {b.property: b for b in graph.blame(t.name, id, ref)}
        except RowNotFoundError:
            pass
    return render(
        request,
        "node.html",
        session,
        ref=ref,
        table=t.name,
        id=id,
        row=row,
        links=links,
        blame=blame,
        history=history[:HISTORY_ROWS],
        more_history=len(history) > HISTORY_ROWS,
    )
