"""History operations from the pages: revert and cherry-pick (commit page), tags
(create: write; delete: admin), the branch page with its reflog, reset (admin for a
protected branch), and branch create / delete (delete: admin).

Each form post goes through the library as the HTTP routes do, with the same rules: the
session's scope, protected branches, and the token's branch patterns (the acting
middleware runs every UI request as the token's name, restricted to its `branches`; a
refusal is the library's `BranchPermissionError`, shown as a 403 page). Commits name the
session's token as their author. A post redirects to the page showing what it did
(post/redirect/get).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from graphlake.server.auth import check_not_protected
from graphlake.server.config import Scope
from graphlake.server.deps import AppState
from graphlake.server.errors import ApiError
from graphlake.server.ui.deps import (
    UiRoute,
    app_state,
    check_csrf,
    read_form,
    require_session,
)
from graphlake.server.ui.pages_merge import STRATEGIES, result_url
from graphlake.server.ui.render import render
from graphlake.server.ui.session import Session

router = APIRouter(route_class=UiRoute, include_in_schema=False)

REFLOG_ROWS = 20
Ref = Annotated[str, Query(min_length=1, max_length=1000)]


async def posted(request: Request, scope: Scope) -> tuple[Session, dict[str, str], AppState]:
    """The session (of at least `scope`), its CSRF-checked form, and the app state."""
    session = require_session(request, scope)
    form = await read_form(request)
    check_csrf(session, form)
    return session, form, app_state(request)


def needed(form: dict[str, str], *names: str) -> list[str]:
    values = [form.get(n, "").strip() for n in names]
    missing = [n for n, v in zip(names, values, strict=True) if not v]
    if missing:
        raise ApiError(400, "BadRequest", f"the form needs {', '.join(missing)}")
    return values


def strategy_of(form: dict[str, str]) -> str | None:
    strategy = form.get("strategy", "")
    if strategy not in STRATEGIES:
        raise ApiError(400, "BadRequest", "strategy is '', 'ours' or 'theirs'")
    return strategy or None


def mainline_of(form: dict[str, str]) -> int | None:
    text = form.get("mainline", "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise ApiError(400, "BadRequest", "mainline is a parent's number (1, 2, ...)")
    return int(text)


async def _apply(request: Request, kind: str) -> Response:
    session, form, state = await posted(request, Scope.write)
    rev, branch = needed(form, "rev", "branch")
    strategy, mainline = strategy_of(form), mainline_of(form)
    message = form.get("message", "").strip() or None
    graph = state.graph

    def run() -> Any:
        with state.locks.hold(branch):
            apply = graph.revert if kind == "revert" else graph.cherry_pick
            return apply(rev, branch, mainline=mainline, strategy=strategy, message=message)

    result = await run_in_threadpool(run)
    target = result.commit or graph.head(branch).id
    what = f"{kind} of {rev} on {branch}"
    return RedirectResponse(result_url(request, session, target, what, result), 303)


@router.post("/ui/revert")
async def revert(request: Request) -> Response:
    return await _apply(request, "revert")


@router.post("/ui/cherry-pick")
async def cherry_pick(request: Request) -> Response:
    return await _apply(request, "cherry-pick")


@router.post("/ui/tags/create")
async def create_tag(request: Request) -> Response:
    _, form, state = await posted(request, Scope.write)
    name, rev = needed(form, "name", "rev")
    message = form.get("message", "").strip() or None
    tag = await run_in_threadpool(state.graph.tag, name, rev, message)
    return RedirectResponse(f"/ui/commit/{tag.commit}", 303)


@router.post("/ui/tags/delete")
async def delete_tag(request: Request) -> Response:
    _, form, state = await posted(request, Scope.admin)
    (name,) = needed(form, "name")
    tag = await run_in_threadpool(state.graph.delete_tag, name)
    return RedirectResponse(f"/ui/commit/{tag.commit}", 303)


@router.post("/ui/reset")
async def reset(request: Request) -> Response:
    session, form, state = await posted(request, Scope.write)
    branch, rev = needed(form, "branch", "rev")
    if branch in state.config.protected_branches and session.scope < Scope.admin:
        raise ApiError(
            403,
            "ProtectedBranchError",
            f"branch {branch!r} is protected: resetting it needs the admin scope",
        )

    def run() -> Any:
        with state.locks.hold(branch):
            return state.graph.reset_branch(branch, rev)

    await run_in_threadpool(run)
    return RedirectResponse(f"/ui/branch?{urlencode({'name': branch})}", 303)


@router.post("/ui/branches/create")
async def create_branch(request: Request) -> Response:
    session, form, state = await posted(request, Scope.write)
    (name,) = needed(form, "name")
    start = form.get("from", "").strip() or state.graph.repo.info.default_branch
    if name in state.config.protected_branches and session.scope < Scope.admin:
        raise ApiError(
            403,
            "ProtectedBranchError",
            f"branch {name!r} is protected: creating it needs the admin scope",
        )
    await run_in_threadpool(state.graph.create_branch, name, start)
    return RedirectResponse(f"/ui/branch?{urlencode({'name': name})}", 303)


@router.post("/ui/branches/delete")
async def delete_branch(request: Request) -> Response:
    _, form, state = await posted(request, Scope.admin)
    (name,) = needed(form, "name")
    if form.get("force") != "on":
        check_not_protected(state.config, name, "deleting it without ticking 'force'")

    def run() -> None:
        with state.locks.hold(name):
            state.graph.delete_branch(name)

    await run_in_threadpool(run)
    return RedirectResponse("/ui/branches", 303)


@router.get("/ui/branch")
def branch_page(request: Request, name: Ref) -> Response:
    """One branch: its head, its reflog (every move, newest first), and the forms that
    move it (reset), delete it, or propose merging it (a merge request)."""
    session = require_session(request)
    state = app_state(request)
    graph = state.graph
    with state.reads.hold():
        head = graph.head(name)
        moves = graph.reflog(name, limit=REFLOG_ROWS)
    return render(
        request,
        "branch.html",
        session,
        name=name,
        head=head,
        moves=moves,
        default=graph.repo.info.default_branch,
        protected=name in state.config.protected_branches,
        can_write=session.scope >= Scope.write,
        can_admin=session.scope >= Scope.admin,
        branches=graph.branches()[:200],
    )
