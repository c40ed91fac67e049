"""`graphlake diff ROOT A B`: per table, what B inserted, updated and deleted relative to A."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from graphlake.cli.options import Json, Root
from graphlake.cli.output import cell, console, print_json, printable
from graphlake.graph import Graph

if TYPE_CHECKING:  # merge.diff imports Lance
    from graphlake.merge.diff import TableDiff

DEFAULT_SHOWN = 10


def diff(
    root: Root,
    a: Annotated[
        str,
        typer.Argument(
            help="Revision to compare from, or a range A...B (from their merge base to B)."
        ),
    ],
    b: Annotated[
        str | None, typer.Argument(help="Revision to compare to (omitted for a range).")
    ] = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            "-n",
            min=0,
            help="At most N rows per table and kind of change (0: all); counts always cover all.",
        ),
    ] = DEFAULT_SHOWN,
    json: Json = False,
) -> None:
    """What B inserted, updated (old -> new) and deleted relative to A, per table.

    A direct comparison: rows only A holds show as deleted, whichever branch wrote them.
    One range A...B instead compares B with its merge base with A: what B changed since
    they forked (what merging B into A would bring).
    """
    changes = Graph.open(root).diff(a, b, limit=limit or None)
    steps = getattr(changes, "schema_changes", [])
    if json:
        # "_schema" cannot clash with a type name (those never start with "_").
        schema = {"_schema": [s.to_json() for s in steps]} if steps else {}
        print_json({**schema, **{table: d.to_dict() for table, d in changes.items()}})
        return
    if b is None:  # a range A...B: label the two ends as the user named them
        a, _, b = a.partition("...")
        a = f"merge base of {a} and {b}"
    print_diff(changes, a, b)


def print_diff(changes: dict[str, TableDiff], a: str, b: str) -> None:
    steps = getattr(changes, "schema_changes", [])
    if steps:  # schema first: the rows below are shown in b's layout
        console.print(f"[bold]schema {escape(a)} → {escape(b)}[/]")
        for step in steps:
            console.print(Text(f"  * {step.describe()} [{step.cost}]", style="magenta"))
    if not changes:
        console.print(
            f"No differences: [cyan]{escape(a)}[/] and [cyan]{escape(b)}[/] hold the same rows"
        )
        return
    console.print(f"[bold]diff {escape(a)} → {escape(b)}[/]")
    for table, d in changes.items():
        for line in table_lines(table, d):
            console.print(line)


def table_lines(table: str, d: TableDiff) -> list[Text]:
    """A heading with the counts, then `+ id values`, `~ id prop: old → new`, `- id values`,
    and how many more there are when the rows were paged."""
    n = d.counts
    lines = [Text.assemble((table, "bold"), f"  +{n['inserted']} ~{n['updated']} -{n['deleted']}")]
    for key in d.inserted:
        lines.append(_row_line("+", key, d, d.inserted_rows.get(key, {}), "green"))
    for key, props in d.changes.items():
        line = _key(Text("  ~ ", style="yellow"), key, d)
        line.append_text(Text(", ").join(_change(p, old, new) for p, (old, new) in props.items()))
        lines.append(line)
    for key in d.deleted:
        lines.append(_row_line("-", key, d, d.deleted_rows.get(key, {}), "red"))
    hidden = sum(n[k] for k in n) - len(d.inserted) - len(d.changes) - len(d.deleted)
    if hidden:
        lines.append(Text(f"  … {hidden} more (--limit 0 shows all)", style="dim"))
    return lines


def _key(prefix: Text, key: str, d: TableDiff) -> Text:
    """`id` for nodes, `id src → dst` for edges (endpoints are what a reader recognises)."""
    line = prefix + Text(printable(key))
    if key in d.endpoints:
        src, dst = d.endpoints[key]
        line.append(f" {printable(src)} → {printable(dst)}")
    return line + Text(": ")


def _row_line(sign: str, key: str, d: TableDiff, row: dict[str, Any], style: str) -> Text:
    line = _key(Text(f"  {sign} ", style=style), key, d)
    values = [(p, v) for p, v in row.items() if p not in ("id", "src", "dst") and v is not None]
    line.append_text(Text(", ").join(Text(f"{p}=") + cell(v) for p, v in values) or Text("{}"))
    return line


def _change(prop: str, old: Any, new: Any) -> Text:
    return Text(f"{prop}: ") + cell(old) + Text(" → ") + cell(new)
