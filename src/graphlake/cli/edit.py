"""`graphlake insert|upsert|update|delete`: change rows from the shell, one commit each.

Rows are JSON objects (a node's properties; an edge's `src`, `dst`, optional `id` and
properties), given as ROW arguments (one object each), `--rows` (a JSON array of objects)
or `--file` (JSONL, one object per line; `-` reads stdin), in that order. `delete` takes
keys (node keys or edge ids) as arguments or one per line in `--file`. Every row is
checked by the same rules as `w.insert(...)` in Python; a row that is not valid JSON is
an error naming where it came from (`argument 2`, `--rows`, `rows.jsonl:3`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.markup import escape

from graphlake.catalog.commits import Commit
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root, TargetBranch
from graphlake.cli.output import CommandError, console, print_json, printable, rows_phrase, short
from graphlake.errors import LoadFormatError
from graphlake.graph import Graph
from graphlake.write.jsonl import parse_json_line

TypeName = Annotated[str, typer.Argument(help="Node or edge type.", show_default=False)]
RowArgs = Annotated[
    list[str] | None,
    typer.Argument(help="Rows, one JSON object per argument.", show_default=False),
]
RowsOption = Annotated[
    str | None, typer.Option("--rows", "-r", help="Rows as one JSON array of objects.")
]
FileOption = Annotated[
    Path | None,
    typer.Option(
        "--file",
        "-f",
        help="Rows as JSONL (one object per line); - reads stdin.",
        dir_okay=False,
        allow_dash=True,
    ),
]
Message = Annotated[str | None, typer.Option("--message", "-m", help="Commit message.")]
Coerce = Annotated[
    bool,
    typer.Option(
        "--coerce",
        help='Cast values of another type ("3.5" for an F64) rather '
        "than refuse them; lossy casts still fail.",
    ),
]


def _row_command(op: str, doc: str) -> Callable[..., None]:
    """The `insert`, `upsert` and `update` commands: one signature (ROW arguments, --rows,
    --file, --branch, --message, --coerce, --json), one body; `op` names the transaction
    method, `doc` is the command's help."""

    def command(
        root: Root,
        table: TypeName,
        rows: RowArgs = None,
        rows_json: RowsOption = None,
        file: FileOption = None,
        branch: TargetBranch = DEFAULT_BRANCH,
        message: Message = None,
        coerce: Coerce = False,
        json: Json = False,
    ) -> None:
        _write(op, root, table, _rows(rows, rows_json, file), branch, message, coerce, json)

    command.__name__ = command.__qualname__ = op
    command.__doc__ = doc
    return command


insert = _row_command(
    "insert", "Add rows to TABLE on BRANCH as one commit; a key that exists already is an error."
)
upsert = _row_command(
    "upsert", "Insert new keys and update existing ones (only the given properties change)."
)
update = _row_command(
    "update", "Change the given properties of existing rows; an unknown key is an error."
)


def delete(
    root: Root,
    table: TypeName,
    keys: Annotated[
        list[str] | None, typer.Argument(help="Node keys or edge ids.", show_default=False)
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            "-f",
            help="Keys, one per line; - reads stdin.",
            dir_okay=False,
            allow_dash=True,
        ),
    ] = None,
    cascade: Annotated[
        bool, typer.Option("--cascade", help="Also delete the edges of deleted nodes.")
    ] = False,
    branch: TargetBranch = DEFAULT_BRANCH,
    message: Message = None,
    json: Json = False,
) -> None:
    """Delete nodes by key or edges by id, as one commit; an unknown key is an error."""
    wanted = [*(keys or ()), *(_key_lines(file) if file is not None else ())]
    if not wanted:
        raise CommandError("no keys given: pass them as arguments or with --file")
    g = Graph.open(root)
    before = g.head(branch)
    with g.write(branch, message or _default_message("delete", table, len(wanted))) as w:
        w.delete(table, wanted, cascade=cascade)
    _report("delete", table, len(wanted), branch, before, w.commit, json)


# --- rows ------------------------------------------------------------------------------


def _rows(args: list[str] | None, rows_json: str | None, file: Path | None) -> list[dict[str, Any]]:
    """Every row given, in order: ROW arguments, then --rows, then --file."""
    out = [
        _object(parse_json_line(a, f"argument {i}", None), f"argument {i}")
        for i, a in enumerate(args or (), start=1)
    ]
    if rows_json is not None:
        out += _array(parse_json_line(rows_json, "--rows", None))
    if file is not None:
        out += list(jsonl_rows(file))
    if not out:
        raise CommandError("no rows given: pass JSON objects as arguments, --rows or --file")
    return out


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise LoadFormatError(
            f"expected a JSON object (a row), got {_json_kind(value)}", path=where
        )
    return value


def _array(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        raise LoadFormatError(
            f"expected a JSON array of objects, got {_json_kind(value)}", path="--rows"
        )
    return [_object(v, f"--rows item {i}") for i, v in enumerate(value, start=1)]


def jsonl_rows(file: Path) -> Iterator[dict[str, Any]]:
    name = "stdin" if str(file) == "-" else str(file)
    for n, line in _numbered_lines(file):
        if line.strip():
            value = parse_json_line(line, name, n)
            if not isinstance(value, dict):
                raise LoadFormatError(
                    f"expected a JSON object (a row), got {_json_kind(value)}", path=name, line=n
                )
            yield value


def _key_lines(file: Path) -> list[str]:
    return [line.strip() for _, line in _numbered_lines(file) if line.strip()]


def _numbered_lines(file: Path) -> Iterable[tuple[int, str]]:
    if str(file) == "-":
        return enumerate(_decoded(sys.stdin, "stdin"), start=1)
    try:
        with file.open(encoding="utf-8") as f:
            return list(enumerate(_decoded(f, str(file)), start=1))
    except OSError as exc:
        raise LoadFormatError(f"cannot read: {exc.strerror}", path=str(file)) from None


def _decoded(f: TextIO, name: str) -> list[str]:
    try:
        return f.readlines()
    except UnicodeDecodeError:
        raise LoadFormatError("not valid UTF-8", path=name) from None


def _json_kind(value: Any) -> str:
    names = {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


# --- writing and reporting -------------------------------------------------------------


def _write(
    op: str,
    root: str,
    table: str,
    rows: list[dict[str, Any]],
    branch: str,
    message: str | None,
    coerce: bool,
    json: bool,
) -> None:
    g = Graph.open(root)
    before = g.head(branch)
    with g.write(branch, message or _default_message(op, table, len(rows))) as w:
        getattr(w, op)(table, rows, coerce=coerce)
    _report(op, table, len(rows), branch, before, w.commit, json)


def _default_message(op: str, table: str, n: int) -> str:
    return f"{op} {table} ({rows_phrase(n)})"


_DONE = {"insert": "Inserted", "upsert": "Upserted", "update": "Updated", "delete": "Deleted"}


def _report(
    op: str, table: str, n: int, branch: str, before: Commit, after: Commit | None, json: bool
) -> None:
    assert after is not None  # the transaction published
    summary = {
        "op": op,
        "table": table,
        "rows": n,
        "branch": branch,
        "commit": after.id,
        "changed": after.id != before.id,
        "message": after.message,
    }
    if json:
        print_json(summary)
        return
    target = f"[cyan]{escape(branch)}[/]"
    if not summary["changed"]:
        console.print(f"Nothing changed: {target} stays at {short(after.id)}")
        return
    what = rows_phrase(n) if op != "delete" else f"{n} key{'s' if n != 1 else ''}"
    console.print(
        f"{_DONE[op]} {what} of {escape(table)} on {target} as commit "
        f"[bold]{short(after.id)}[/] ({escape(printable(after.message))})"
    )
