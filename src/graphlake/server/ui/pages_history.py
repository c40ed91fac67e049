"""Branches, history (with the lane graph) and the commit page; each holds a read slot
(`max_concurrent_reads`) while it walks history."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response

from graphlake.catalog.commits import Commit
from graphlake.catalog.tags import tags_by_commit
from graphlake.errors import BranchNotFoundError, GraphLakeError
from graphlake.graph import Graph
from graphlake.server.config import Scope
from graphlake.server.deps import AppState
from graphlake.server.ui.deps import UiRoute, app_state, outcomes, require_session
from graphlake.server.ui.graphsvg import ROW_H, picture
from graphlake.server.ui.pages_merge import tables_view
from graphlake.server.ui.render import render
from graphlake.server.ui.schema_view import commit_steps, is_schema_commit

router = APIRouter(route_class=UiRoute, include_in_schema=False)

BRANCHES_PER_PAGE = 50
HISTORY_PER_PAGE = 50
CHANGE_ROWS = 50  # rows per table and kind of change on a commit page (more: "show more")
AHEAD_CAP = 1000  # ahead/behind walks stop here ("1000+")
STAT_CACHE = 4096  # commits whose row counts are kept (a few hundred bytes each)
Ref = Annotated[str, Query(min_length=1, max_length=1000)]
Offset = Annotated[int, Query(ge=0)]


@router.get("/ui/branches")
def branches(request: Request, offset: Offset = 0) -> Response:
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    default = graph.repo.info.default_branch
    with state.reads.hold():  # the ahead/behind walks read history
        names = graph.branches()
        rows = _branch_rows(state, names[offset : offset + BRANCHES_PER_PAGE], default)
    more = offset + BRANCHES_PER_PAGE < len(names)
    return render(
        request,
        "branches.html",
        session,
        rows=rows,
        default=default,
        offset=offset,
        more=more,
        per_page=BRANCHES_PER_PAGE,
        can_write=session.scope >= Scope.write,
    )


def _branch_rows(state: AppState, names: list[str], default: str) -> list[dict[str, Any]]:
    graph = state.graph
    rows = []
    for name in names:
        try:
            head = graph.head(name)
        except BranchNotFoundError:  # deleted since it was listed
            continue
        ahead = behind = None
        if name != default:
            ahead = _count(graph, f"{default}...{name}")
            behind = _count(graph, f"{name}...{default}")
        rows.append(
            {
                "name": name,
                "head": head,
                "ahead": ahead,
                "behind": behind,
                "protected": name in state.config.protected_branches,
            }
        )
    return rows


def _count(graph: Graph, span: str) -> str:
    n = len(graph.log(span, limit=AHEAD_CAP + 1))
    return f"{AHEAD_CAP}+" if n > AHEAD_CAP else str(n)


@router.get("/ui/history")
def history(request: Request, ref: Ref | None = None, offset: Offset = 0) -> Response:
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    ref = ref or graph.repo.info.default_branch
    # The lanes of a page depend on every commit above it, so the walk starts at the top;
    # it stops one commit below the page (to draw the lanes leaving its last row).
    cap = state.config.limits.log_max_commits
    offset = min(offset, cap)
    with state.reads.hold():  # a read like any other (max_concurrent_reads)
        commits = graph.log(ref, limit=min(offset + HISTORY_PER_PAGE + 1, cap + 1))
        more = len(commits) > offset + HISTORY_PER_PAGE
        shown = commits[offset : offset + HISTORY_PER_PAGE]
        pic = picture(commits, offset, HISTORY_PER_PAGE)
        tagged = tags_by_commit(graph.tags())
        rows = [
            {
                "commit": c,
                "stat": _stat(graph, c),
                "schema": is_schema_commit(graph, c),
                "tags": tagged.get(c.id, []),
            }
            for c in shown
        ]
    return render(
        request,
        "history.html",
        session,
        ref=ref,
        rows=rows,
        pic=pic,
        row_h=ROW_H,
        offset=offset,
        more=more,
        per_page=HISTORY_PER_PAGE,
    )


def _stat(graph: Graph, commit: Commit) -> dict[str, dict[str, int]] | None:
    """Rows inserted / updated / deleted per table against the first parent, as `log
    --stat` counts them; None when they cannot be compared (e.g. different schemas)."""
    return _stat_of(graph, commit.id)


@lru_cache(maxsize=STAT_CACHE)
def _stat_of(graph: Graph, commit_id: str) -> dict[str, dict[str, int]] | None:
    # Commits never change, so neither do their counts: each is computed once. That
    # costs one delta discovery per changed table (O(changed rows): a 1M-row load is
    # the slow case, ~0.3 s), so a history page is slow only the first time it is drawn.
    from graphlake.merge.diff import commit_stat  # the data stack loads on use

    try:
        return commit_stat(graph.repo, graph.repo.commits.get(commit_id))
    except GraphLakeError:
        return None


@router.get("/ui/commit/{commit_id}")
def commit_page(
    request: Request,
    commit_id: str,
    merged: Annotated[str | None, Query(max_length=1000)] = None,
    outcome: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(ge=1)] = CHANGE_ROWS,
) -> Response:
    """A commit: its facts, and the rows it changed against its first parent (old ->
    new per property), `limit` rows per table and kind of change (capped like a diff)."""
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    cap = state.config.limits.page_max_rows
    limit = min(limit, cap)
    with state.reads.hold():
        commit = graph.resolve(commit_id)
        parents = [graph.repo.commits.get(p) for p in commit.parents]
        schema_changed = bool(parents) and parents[0].schema_id != commit.schema_id
        steps = commit_steps(graph, commit)
        tables: dict[str, Any] | None = {}
        if parents:
            try:
                tables = tables_view(state, graph.diff(parents[0].id, commit.id, limit=limit))
            except GraphLakeError:  # layouts that cannot be compared: say so
                tables = None
    return render(
        request,
        "commit.html",
        session,
        commit=commit,
        parents=parents,
        tables=tables,
        schema_changed=schema_changed,
        steps=steps,
        merged=merged,
        outcome=outcomes(request).get(session.id, outcome),
        tags=tags_by_commit(graph.tags()).get(commit.id, []),
        limit=limit,
        cap=cap,
        more_href=f"?{urlencode({'limit': min(limit * 4, cap)})}",
        can_write=session.scope >= Scope.write,
        can_admin=session.scope >= Scope.admin,
        branches=graph.branches()[:200],
        default_branch=graph.repo.info.default_branch,
    )
