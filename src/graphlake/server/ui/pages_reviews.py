"""Merge requests in the web UI: the list, a form to open one, and a request's page
with its preview (outcome, routes, conflicts, diff summary, data checks when the
preview has them, approvals), its comments and events, and the forms that approve,
comment, close and merge it.

Everything goes through `g.reviews` as `POST /merge-requests/...` does: the acting
middleware makes the session's token name the one who acts (so an author cannot
approve their own request), its branch patterns bind the merge, and the target
branch's rules (`[branches."NAME"]`, review/rules.py) are passed to the preview and the
merge. The merge button is enabled only when the rules hold; conflicts are settled on
the page, each by a choice (ours, theirs, base, a merge_many side's name, or a value
typed in), which become the merge's `resolutions`, or by a strategy for the rest.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from graphlake.catalog.reviews import MergeRequest
from graphlake.conflicts import SCHEMA_CONFLICT
from graphlake.errors import DataCheckFailedError, MergeConflictError
from graphlake.server.config import Scope
from graphlake.server.deps import AppState
from graphlake.server.errors import ApiError
from graphlake.server.queries import check_runner
from graphlake.server.ui.deps import (
    UiRoute,
    app_state,
    check_csrf,
    read_form,
    require_session,
)
from graphlake.server.ui.pages_merge import STRATEGIES, VIOLATION_KINDS, result_url
from graphlake.server.ui.render import render
from graphlake.server.ui.session import Session

router = APIRouter(route_class=UiRoute, include_in_schema=False)

LIST_ROWS = 100  # requests listed, newest first
MAX_CHOICES = 50  # conflicts drawn with a choice each; a strategy settles the others
RESOLVE = "res:"  # form field: RESOLVE + JSON [table, key, property] -> take
VALUE = "val:"  # form field: VALUE + the same JSON -> the value typed in
MAX_MERGE_FIELDS = 2 * 20 * MAX_CHOICES + 10  # bounded in bytes too (16 KiB)
# The blocker the engine reports for conflicts: this page settles them itself.
CONFLICT_BLOCKER = "unresolved conflict"
RequestId = Annotated[int, Path(ge=1, lt=10**8)]
Ref = Annotated[str, Query(min_length=1, max_length=1000)]


@router.get("/ui/mr")
def request_list(
    request: Request, state: Literal["open", "merged", "closed"] | None = None
) -> Response:
    session = require_session(request)
    graph = app_state(request).graph
    found = sorted(graph.reviews.list(state), key=lambda mr: mr.id, reverse=True)
    return render(
        request,
        "mr_list.html",
        session,
        requests=found[:LIST_ROWS],
        more=len(found) > LIST_ROWS,
        state=state or "",
        can_write=session.scope >= Scope.write,
    )


@router.get("/ui/mr/new")
def new_request(request: Request, source: Ref | None = None, into: Ref | None = None) -> Response:
    session = require_session(request, Scope.write)
    graph = app_state(request).graph
    return render(
        request,
        "mr_new.html",
        session,
        source=source or "",
        into=into or graph.repo.info.default_branch,
        branches=graph.branches()[:200],
    )


async def _posted(
    request: Request, max_fields: int | None = None
) -> tuple[Session, dict[str, str], AppState]:
    session = require_session(request, Scope.write)
    form = await (read_form(request, max_fields) if max_fields else read_form(request))
    check_csrf(session, form)
    return session, form, app_state(request)


@router.post("/ui/mr/open")
async def open_request(request: Request) -> Response:
    _, form, state = await _posted(request)
    source, into, title = (form.get(k, "").strip() for k in ("source", "into", "title"))
    if not source or not into or not title:
        raise ApiError(400, "BadRequest", "a merge request needs source, into and a title")
    mr = await run_in_threadpool(
        state.graph.reviews.open, source, into, title, form.get("description", "")
    )
    return RedirectResponse(f"/ui/mr/{mr.id}", 303)


def _page(
    request: Request,
    session: Session,
    rid: int,
    status: int = 200,
    problem: str | None = None,
    form: dict[str, str] | None = None,
) -> Response:
    state = app_state(request)
    reviews = state.graph.reviews
    mr = reviews.get(rid)
    rules = state.config.rules_for(mr.into)
    with state.reads.hold():
        preview = reviews.preview(mr, rules, check_runner(state))
    blockers = [b for b in preview.get("blocked_by", []) if CONFLICT_BLOCKER not in b]
    conflicts = preview.get("conflicts") or []
    return render(
        request,
        "mr.html",
        session,
        status=status,
        mr=mr,
        preview=preview,
        rules=rules,
        conflicts=[
            c for c in conflicts if c.get("kind") not in (*VIOLATION_KINDS, SCHEMA_CONFLICT)
        ],
        schema_conflicts=[c for c in conflicts if c.get("kind") == SCHEMA_CONFLICT],
        violations=[c for c in conflicts if c.get("kind") in VIOLATION_KINDS],
        checks=_checks(preview.get("data_checks")),
        blockers=blockers,
        rules_hold=not blockers,
        can_write=session.scope >= Scope.write,
        is_author=session.name is not None and session.name == mr.author,
        max_choices=MAX_CHOICES,
        problem=problem,
        chosen=form or {},
        resolve=RESOLVE,
        value=VALUE,
    )


def _checks(found: Any) -> list[dict[str, Any]] | None:
    """The preview's data check results as a list of dicts with at least `name` (a
    mapping name -> result is listed in name order); None when the preview has none."""
    if found is None:
        return None
    if isinstance(found, dict):
        found = [
            {"name": k, **(v if isinstance(v, dict) else {"result": v})} for k, v in found.items()
        ]
    return [c if isinstance(c, dict) else {"name": str(c)} for c in found]


@router.get("/ui/mr/{rid}")
def request_page(request: Request, rid: RequestId) -> Response:
    session = require_session(request)
    return _page(request, session, rid)


@router.post("/ui/mr/{rid}/approve")
async def approve(request: Request, rid: RequestId) -> Response:
    _, _, state = await _posted(request)
    await run_in_threadpool(state.graph.reviews.approve, rid)
    return RedirectResponse(f"/ui/mr/{rid}", 303)


@router.post("/ui/mr/{rid}/comment")
async def comment(request: Request, rid: RequestId) -> Response:
    _, form, state = await _posted(request)
    await run_in_threadpool(state.graph.reviews.comment, rid, form.get("text", ""))
    return RedirectResponse(f"/ui/mr/{rid}#events", 303)


@router.post("/ui/mr/{rid}/close")
async def close(request: Request, rid: RequestId) -> Response:
    _, _, state = await _posted(request)
    await run_in_threadpool(state.graph.reviews.close, rid)
    return RedirectResponse(f"/ui/mr/{rid}", 303)


@router.post("/ui/mr/{rid}/merge")
async def merge(request: Request, rid: RequestId) -> Response:
    session, form, state = await _posted(request, MAX_MERGE_FIELDS)
    strategy = form.get("strategy", "")
    if strategy not in STRATEGIES:
        raise ApiError(400, "BadRequest", "strategy is '', 'ours' or 'theirs'")
    reviews = state.graph.reviews
    mr = reviews.get(rid)
    resolutions = resolutions_of(form, _preview_conflicts(state, mr))

    def run() -> MergeRequest:
        with state.locks.hold(mr.into):
            return reviews.merge(
                rid,
                resolutions=resolutions or None,
                strategy=strategy or None,
                rules=state.config.rules_for(mr.into),
                runner=check_runner(state),
            )

    try:
        merged = await run_in_threadpool(run)
    except (MergeConflictError, DataCheckFailedError) as exc:  # nothing changed: the page
        return _page(request, session, rid, 409, str(exc), form)  # again, choices kept
    result = merged.result
    what = f"merge request #{rid} ({mr.source} into {mr.into})"
    commit = merged.merge_commit or state.graph.head(mr.into).id
    return RedirectResponse(result_url(request, session, commit, what, result), 303)


def _preview_conflicts(state: AppState, mr: MergeRequest) -> list[dict[str, Any]]:
    with state.reads.hold():
        preview = state.graph.reviews.preview(mr, runner=check_runner(state))
        return list(preview.get("conflicts") or [])


def resolutions_of(form: dict[str, str], conflicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `resolutions` the form's choices name: one per conflict (or property of one)
    whose choice is not empty. A value typed in is read as JSON (`42`, `null`,
    `[1, 2]`, `"text"`), except for a property whose sides hold text, where it is taken
    as typed; a value that is no JSON is text."""
    out = []
    for name, take in form.items():
        if not name.startswith(RESOLVE) or not take:
            continue
        try:
            table, key, prop = json.loads(name[len(RESOLVE) :])
        except (ValueError, TypeError):
            raise ApiError(
                400, "BadRequest", f"a resolution field is malformed: {name!r}"
            ) from None
        item: dict[str, Any] = {"table": table, "key": key, "property": prop, "take": take}
        if take == "value":
            item["value"] = _typed(
                form.get(VALUE + name[len(RESOLVE) :], ""), table, key, prop, conflicts
            )
        out.append(item)
    return out


def _typed(
    text: str, table: str, key: str, prop: str | None, conflicts: list[dict[str, Any]]
) -> Any:
    if prop is not None and _holds_text(conflicts, table, key, prop):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _holds_text(conflicts: list[dict[str, Any]], table: str, key: str, prop: str) -> bool:
    for c in conflicts:
        if c.get("table") == table and str(c.get("entity_id")) == str(key):
            rows = [
                c.get("base"),
                c.get("source"),
                c.get("target"),
                *(c.get("rows") or {}).values(),
            ]
            return any(isinstance(r, dict) and isinstance(r.get(prop), str) for r in rows)
    return False
