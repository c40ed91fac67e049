"""What every command shares: the two consoles, error lines, JSON and rich tables.

Human output goes to stdout through rich; `--json` output is written to stdout as plain
text (no rich wrapping or colour) so scripts can parse it; progress and errors go to
stderr.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from graphlake.errors import GraphLakeError

if TYPE_CHECKING:  # pyarrow is imported by the commands that print Arrow tables
    import pyarrow as pa

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

EXIT_FAILED = 1  # the operation failed because of the data or the arguments' content
SHORT_ID = 12
_VECTOR_PREVIEW = 4


class CommandError(Exception):
    """A failure the CLI itself detects (not the library); reported like a GraphLakeError."""


# --- errors ------------------------------------------------------------------------------


# The library's hints name Python arguments; the CLI names its own options instead.
_CLI_HINTS = (
    ("cascade=True", "--cascade"),
    ("coerce=True", "--coerce"),
    ("(use upsert or update to change existing rows)",
     "(use `graphlake upsert` or `graphlake update`, or `load --mode merge`, to change "
     "existing rows)"),
)


def cli_wording(message: str) -> str:
    """`message` with its hints naming the CLI's options rather than Python arguments."""
    for python, cli in _CLI_HINTS:
        message = message.replace(python, cli)
    return message


def error_line(exc: BaseException) -> str:
    """One line for an error: its message, plus any notes (e.g. the schema file)."""
    parts = [str(exc) or type(exc).__name__, *getattr(exc, "__notes__", ())]
    lines = (line.strip() for part in parts for line in str(part).splitlines())
    return printable(cli_wording(" ".join(line for line in lines if line and set(line) != {"^"})))


def fail(exc: BaseException, code: int = EXIT_FAILED) -> typer.Exit:
    """Print `error: <message>` in red to stderr; the caller raises the returned Exit."""
    err_console.print(Text("error: ", style="bold red") + Text(error_line(exc)), soft_wrap=True)
    return typer.Exit(code)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn library and CLI failures into a one-line message and exit code 1."""
    try:
        yield
    except (GraphLakeError, CommandError) as exc:
        raise fail(exc) from None


# --- terminal safety ----------------------------------------------------------------------

# C0 and C1 controls (ESC starts terminal sequences, 0x9b is a one-byte CSI) and the
# bidirectional overrides and isolates, which reorder what a terminal shows (CVE-2021-42574).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with control characters shown as escapes (`\\x1b`, `\\n`, `\\u202e`), so
    stored text can neither drive the terminal nor hide what it holds."""
    return _UNSAFE.sub(lambda m: repr(m.group())[1:-1], text)


# --- JSON --------------------------------------------------------------------------------


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(value), ensure_ascii=False, allow_nan=False) + "\n")
    sys.stdout.flush()


def jsonable(value: Any) -> Any:
    """Plain JSON values for what Arrow hands back (dates, bytes, decimals, NaN)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as JSON values; float32 values as their shortest decimal (`0.122`)."""
    from graphlake.read.floats import shortest_floats

    return [jsonable(row) for row in shortest_floats(table).to_pylist()]


# --- rich tables -------------------------------------------------------------------------


def short(commit_id: str) -> str:
    return commit_id[:SHORT_ID]


def short_time(iso: str) -> str:
    """`2025-01-02T03:04:05.123456Z` -> `2025-01-02 03:04:05` (UTC)."""
    return iso[:19].replace("T", " ")


def rows_phrase(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"


def plural(n: int, word: str) -> str:
    """`1 conflict`, `2 conflicts`."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def truncated(items: Sequence[str], limit: int) -> str:
    """`a, b, c, … (+7 more)`: at most `limit` items (0: all), in the order given."""
    if not limit or len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", … (+{len(items) - limit} more)"


def arrow_table(table: pa.Table, title: str | None = None) -> Table:
    """A rich table of an Arrow table, one column per field."""
    import pyarrow.types as pa_types

    from graphlake.read.floats import shortest_floats

    table = shortest_floats(table)
    out = Table(title=title, title_justify="left")
    for field in table.schema:
        numeric = pa_types.is_integer(field.type) or pa_types.is_floating(field.type)
        out.add_column(printable(field.name), justify="right" if numeric else "left",
                       overflow="fold")
    for row in table.to_pylist():
        out.add_row(*(cell(v) for v in row.values()))
    return out


def plain_table(columns: Sequence[str], rows: Sequence[Sequence[Any]],
                title: str | None = None) -> Table:
    out = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        numeric = bool(rows) and all(isinstance(r[i], int | float) for r in rows)
        out.add_column(printable(name), justify="right" if numeric else "left",
                       overflow="fold")
    for row in rows:
        out.add_row(*(cell(v) for v in row))
    return out


def cell(value: Any) -> Text:
    """How one value reads in a table cell; never interpreted as rich markup."""
    if value is None:
        return Text("null", style="dim")
    if isinstance(value, bytes):
        return Text(f"<{len(value)} bytes>", style="dim")
    if isinstance(value, float):
        return Text(f"{value:.6g}")
    if isinstance(value, list):
        return Text(_list_preview(value))
    if isinstance(value, dict):
        return Text(printable(json.dumps(jsonable(value), ensure_ascii=False)))
    if isinstance(value, dt.date | dt.datetime):
        return Text(value.isoformat())
    if isinstance(value, Text):
        return value
    return Text(printable(str(value)))


def _list_preview(values: list[Any]) -> str:
    shown = [f"{v:.3g}" if isinstance(v, float) else printable(str(v))
             for v in values[:_VECTOR_PREVIEW]]
    more = f", … ({len(values)})" if len(values) > _VECTOR_PREVIEW else ""
    return "[" + ", ".join(shown) + more + "]"
