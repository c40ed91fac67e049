"""Jinja2 templates (autoescaped) and the small filters the pages share."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse

from graphlake import __version__
from graphlake.server.ui import conflict_view
from graphlake.server.ui.schema_view import definition
from graphlake.server.ui.session import Session

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
MAX_CELL_CHARS = 200  # long values are cut in tables; the node page shows them whole
BRIEF_CHARS = 80  # a value beside two others (a conflict's sides) is cut shorter
VECTOR_PREVIEW = 2  # items a long list shows: [0.12, 0.51, … (128)], as the CLI does
# Pages run no script and load only this server's stylesheet; no other site may frame
# them (a framed Merge button could be clicked through a decoy).
SECURITY_HEADERS = {
    "Cache-Control": "no-store",  # graph data behind a login
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


@cache
def environment() -> Any:
    # Imported on first use: the server answers /health before any page is drawn.
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["short"] = lambda s: (s or "")[:12]
    env.filters["when"] = lambda t: (t or "").replace("T", " ")[:19]
    env.filters["cell"] = cell
    env.filters["brief"] = brief
    env.filters["definition"] = definition
    env.globals["qs"] = lambda **kw: urlencode({k: v for k, v in kw.items() if v is not None})
    env.globals["version"] = __version__
    env.globals["conflict_sides"] = conflict_view.sides
    env.globals["conflict_properties"] = conflict_view.properties
    return env


def cell(value: Any, limit: int = MAX_CELL_CHARS) -> str:
    """A value as table text: JSON-like for containers, cut at `limit` characters."""
    if value is None:
        return "∅"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
    """A value in little room: a list longer than four items as its first two and its
    length (`[0.12, 0.51, … (128)]`), anything else as `cell` cut at `limit`."""
    if isinstance(value, list | tuple) and len(value) > 4:
        head = ", ".join(cell(v, 20) for v in value[:VECTOR_PREVIEW])
        return f"[{head}, … ({len(value)})]"
    return cell(value, limit)


def render(
    request: Request, template: str, session: Session | None, status: int = 200, **context: Any
) -> HTMLResponse:
    html = (
        environment()
        .get_template(template)
        .render(request=request, session=session, path=request.url.path, **context)
    )
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
