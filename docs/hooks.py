"""MkDocs hook: the reference pages are generated from the code before every build.

* `reference/cli.md` from the typer application (`graphlake.cli.app`): every command and
  subcommand with its usage line, help text and options, as `--help` prints them;
* `reference/http.md` from the server's OpenAPI document (`create_app(...).openapi()` on a
  throwaway graph): every path and method with its summary, parameters and scope.

Both are written into `docs/reference/` (git-ignored) so `mkdocs build --strict` checks
links into them like any page. Nothing here is hand-maintained: a new command or endpoint
appears in the docs by existing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).parent / "reference"


def on_pre_build(config: Any) -> None:
    REFERENCE.mkdir(exist_ok=True)
    _write(REFERENCE / "cli.md", cli_reference())
    _write(REFERENCE / "http.md", http_reference())


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text("utf-8") != text:  # no rebuild loop in `serve`
        path.write_text(text, "utf-8")


# --- CLI ----------------------------------------------------------------------------------


def cli_reference() -> str:
    import typer

    from graphlake.cli.app import app

    root = typer.main.get_command(app)
    lines = [
        "# CLI reference",
        "",
        "Generated from the commands themselves (`docs/hooks.py`); "
        "`graphlake CMD --help` prints the same.",
        "",
    ]
    for path, command in _commands(root, ("graphlake",)):
        lines += _command_doc(path, command)
    return "\n".join(lines) + "\n"


def _commands(group: Any, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    """Every visible command under `group`, depth first. (typer vendors click as
    `typer._click`, so the classes are recognised by what they have.)"""
    out: list[tuple[tuple[str, ...], Any]] = []
    if hasattr(group, "commands"):
        for name in sorted(group.commands):
            sub = group.commands[name]
            if sub.hidden:
                continue
            out.append(((*path, name), sub))
            out += _commands(sub, (*path, name))
    return out


def _command_doc(path: tuple[str, ...], command: Any) -> list[str]:
    ctx = command.context_class(command, info_name=" ".join(path))
    usage = " ".join(command.collect_usage_pieces(ctx))
    depth = min(len(path), 4)
    lines = [f"{'#' * depth} `{' '.join(path[1:])}`", "", f"```\n{' '.join(path)} {usage}\n```", ""]
    if command.help:
        lines += [_flow(command.help), ""]
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    if params:
        lines += ["| argument or option | meaning |", "|---|---|"]
        for p in params:
            names = ", ".join(f"`{n}`" for n in (*p.opts, *p.secondary_opts))
            text = getattr(p, "help", None) or ""
            default = p.default if not callable(p.default) else None
            if (
                p.param_type_name == "option"
                and default not in (None, False, (), "")
                and not p.is_flag
            ):
                text += f" (default: `{default}`)"
            lines.append(f"| {names} | {_cell(text)} |")
        lines.append("")
    return lines


def _flow(text: str) -> str:
    """Docstring paragraphs as flowing text (single newlines joined)."""
    paras = [
        " ".join(line.strip() for line in block.splitlines())
        for block in text.strip().split("\n\n")
    ]
    return "\n\n".join(p.replace("\b", "").strip() for p in paras)


def _cell(text: str) -> str:
    return _flow(text).replace("|", "\\|").replace("\n\n", "<br>")


# --- HTTP ---------------------------------------------------------------------------------


def http_reference() -> str:
    import graphlake as gl
    from graphlake.server.app import create_app
    from graphlake.server.config import ServerConfig

    with tempfile.TemporaryDirectory(prefix="graphlake-docs-") as tmp:
        g = gl.Graph.init(Path(tmp) / "g", "node Doc { name: String @key }")
        spec = create_app(g, ServerConfig(no_auth=True)).openapi()
    lines = [
        "# HTTP reference",
        "",
        "Generated from the server's OpenAPI document (`docs/hooks.py`); a running "
        "server serves the same at `/openapi.json`. Errors are "
        '`{"error": {"type", "message"}}`; see the [server guide](../server.md) for '
        "scopes, limits and tokens.",
        "",
    ]
    for path in sorted(spec["paths"]):
        if path.startswith("/ui") or path == "/":
            continue
        for method, op in spec["paths"][path].items():
            lines += [f"## `{method.upper()} {path}`", ""]
            summary = op.get("description") or op.get("summary") or ""
            if summary:
                lines += [_flow(summary), ""]
            params = op.get("parameters", [])
            if params:
                lines += ["| parameter | in | meaning |", "|---|---|---|"]
                for p in params:
                    text = p.get("description", "")
                    lines.append(f"| `{p['name']}` | {p['in']} | {_cell(text)} |")
                lines.append("")
            body = op.get("requestBody", {}).get("content", {})
            ref = body.get("application/json", {}).get("schema", {}).get("$ref")
            if ref:
                lines += [f"Body: `{ref.rsplit('/', 1)[-1]}` (JSON).", ""]
    return "\n".join(lines) + "\n"
