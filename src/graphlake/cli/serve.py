"""`graphlake serve`: the HTTP API and the web UI (needs the `server` extra: fastapi,
uvicorn, jinja2)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from graphlake.cli.options import Root
from graphlake.cli.output import CommandError, err_console
from graphlake.errors import MissingExtraError


def serve(
    root: Root,
    host: Annotated[
        str, typer.Option(help="Address to bind (only loopback is tested).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8080,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            dir_okay=False,
            help="Config file, TOML or JSON: tokens (token and scope: read, write "
            "or admin), protected_branches, limits. Tokens may also come from "
            'GRAPHLAKE_TOKENS="tok1:read,tok2:admin".',
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Serve without authentication (everything "
            "is allowed). Needed when no token is set.",
        ),
    ] = False,
    allow_short_tokens: Annotated[
        bool,
        typer.Option(
            "--allow-short-tokens", help="Accept tokens shorter than 16 characters (tests only)."
        ),
    ] = False,
    behind_proxy: Annotated[
        bool,
        typer.Option(
            "--behind-proxy",
            help="A TLS proxy on 127.0.0.1 is the only way in: take the "
            "client address and scheme from its X-Forwarded-For and "
            "X-Forwarded-Proto headers (off: trust no such header).",
        ),
    ] = False,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the graph at ROOT over HTTP (JSON API, OpenAPI schema at /openapi.json, web
    UI at /ui)."""
    try:
        # on first use only: loads fastapi (start-up time)
        from graphlake.server import ConfigError, load_config

        # on first use only: loads fastapi (start-up time)
        from graphlake.server import serve as run
    except MissingExtraError as exc:  # the `server` extra is not installed
        raise CommandError(f"graphlake serve: {exc}") from None
    try:
        settings = load_config(config, no_auth=no_auth, allow_short_tokens=allow_short_tokens)
        settings.check()
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    if no_auth:
        err_console.print(
            "[bold yellow]warning:[/] authentication is off (--no-auth): "
            "anyone who can reach the port can read, write and delete."
        )
    if no_auth and settings.tokens:
        err_console.print("[yellow]warning:[/] --no-auth ignores the configured tokens.")
    run(root, settings, host=host, port=port, log_level=log_level, behind_proxy=behind_proxy)
