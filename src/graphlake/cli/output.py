"""What every command shares: the two consoles, error lines, JSON and rich tables.

Human output goes to stdout through rich; `--json` output is written to stdout as plain
text (no rich wrapping or colour) so scripts can parse it; progress and errors go to
stderr.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from graphlake.errors import GraphLakeError
from graphlake.read.jsonable import jsonable as jsonable  # re-exported for the commands
from graphlake.read.jsonable import table_rows as table_rows

if TYPE_CHECKING:  # pyarrow is imported by the commands that print Arrow tables
    import pyarrow as pa

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

EXIT_FAILED = 1  # the operation failed because of the data or the arguments' content
SHORT_ID = 12
_VECTOR_PREVIEW = 2  # values a vector shows in a table cell: [0.12, 0.51, … (128)]
_HEADER_MIN = 12  # a data table's header is shown whole up to this width, never broken
_IDENTIFIERS = frozenset({"id", "src", "dst"})
_WHOLE_MAX = 32  # a number or date wider than this may be cut after all
_TEXT_PREVIEW = 40  # characters of a long value a table shows at 80 columns; --json: all


class CommandError(Exception):
    """A failure the CLI itself detects (not the library); reported like a GraphLakeError."""


# --- errors ------------------------------------------------------------------------------


# The library's hints name Python arguments; the CLI names its own options instead.
_CLI_HINTS = (
    ("cascade=True", "--cascade"),
    ("coerce=True", "--coerce"),
    (
        "(use upsert or update to change existing rows)",
        "(use `graphlake upsert` or `graphlake update`, or `load --mode merge`, to change "
        "existing rows)",
    ),
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
    """A rich table of an Arrow table, one column per field. Values wrap between words
    only; long ones are abbreviated with "…" (vectors `[0.12, 0.51, … (128)]`), except
    ids (`id`, `src`, `dst`), which are never cut; numbers, dates and headers are never
    cut either. Columns that do not fit the terminal are left out, named in a caption
    (`--columns` picks others; `--json` shows every value whole)."""
    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow.types as pa_types

    # on first use only: loads pyarrow, numpy (start-up time)
    from graphlake.read.floats import shortest_floats

    table = shortest_floats(table)
    names = [printable(f.name) for f in table.schema]
    cells = [
        [_abbreviated(cell(v), f.name in _IDENTIFIERS) for v in table.column(i).to_pylist()]
        for i, f in enumerate(table.schema)
    ]
    whole = [
        f.name not in _IDENTIFIERS
        and not (
            pa_types.is_string(f.type)
            or pa_types.is_large_string(f.type)
            or pa_types.is_nested(f.type)
        )
        for f in table.schema
    ]
    # The narrowest each column may be: its header (up to _HEADER_MIN), and all of a
    # value that must not be cut (a number, a date); text and lists wrap or abbreviate,
    # ids fold.
    minimum = [
        max(
            [
                min(len(name), _HEADER_MIN),
                *([min(len(c), _WHOLE_MAX) for c in column] if keep else []),
            ]
        )
        for name, column, keep in zip(names, cells, whole, strict=True)
    ]
    shown = list(range(len(names)))
    while True:  # leave out the last columns until rich can fit the rest unbroken
        out = _data_table(table.schema, names, cells, minimum, shown, title)
        if len(shown) == 1 or fits(out, console.width):
            return out
        shown.pop()


def fits(out: Table, width: int) -> bool:
    """Whether rich draws `out` within `width` columns (it overflows, rather than
    breaking headers and whole values further, when the columns' minimums add up)."""
    drawn = io.StringIO()
    probe = Console(width=width, file=drawn, color_system=None)
    probe.print(out, crop=False)
    return all(cell_len(line) <= width for line in drawn.getvalue().splitlines())


def _data_table(
    schema: pa.Schema,
    names: list[str],
    cells: list[list[Text]],
    minimum: list[int],
    shown: list[int],
    title: str | None,
) -> Table:
    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow.types as pa_types

    hidden = [names[i] for i in range(len(names)) if i not in shown]
    caption = (
        f"{plural(len(hidden), 'column')} not shown: {truncated(hidden, 8)} (--columns, or --json)"
        if hidden
        else None
    )
    out = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for i in shown:
        field = schema.field(i)
        numeric = pa_types.is_integer(field.type) or pa_types.is_floating(field.type)
        out.add_column(
            names[i],
            justify="right" if numeric else "left",
            overflow="fold" if field.name in _IDENTIFIERS else "ellipsis",
            min_width=minimum[i],
        )
    for r in range(len(cells[0]) if cells else 0):
        out.add_row(*(cells[i][r] for i in shown))
    return out


def plain_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None
) -> Table:
    out = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        numeric = bool(rows) and all(isinstance(r[i], int | float) for r in rows)
        out.add_column(printable(name), justify="right" if numeric else "left", overflow="fold")
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


def _abbreviated(text: Text, identifier: bool) -> Text:
    """A long text value cut to `_TEXT_PREVIEW` characters (half the terminal's width on
    a wide one) and "…", at a word's end where there is one; ids stay whole."""
    limit = max(_TEXT_PREVIEW, console.width // 2)
    if identifier or len(text) <= limit:
        return text
    cut = text.plain[: limit - 1]
    if " " in cut.strip():  # at a word's end where there is one
        cut = cut[: cut.rstrip().rindex(" ")]
    return Text(cut.rstrip() + "…", style=text.style)


def _list_preview(values: list[Any]) -> str:
    shown = [
        f"{v:.3g}" if isinstance(v, float) else printable(str(v)) for v in values[:_VECTOR_PREVIEW]
    ]
    more = f", … ({len(values)})" if len(values) > _VECTOR_PREVIEW else ""
    return "[" + ", ".join(shown) + more + "]"
