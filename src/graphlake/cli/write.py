"""`graphlake init` and `graphlake load`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column, Table

from graphlake.catalog.commits import Commit
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root, TargetBranch
from graphlake.cli.output import console, print_json, rows_phrase, short
from graphlake.cli.progress import count_records, load_bar
from graphlake.graph import Graph


class LoadMode(StrEnum):
    append = "append"
    merge = "merge"
    overwrite = "overwrite"


SchemaFile = Annotated[
    Path,
    typer.Option(
        "--schema", "-s", help="Schema file (.pg).", exists=True, dir_okay=False, readable=True
    ),
]


def init(root: Root, schema: SchemaFile, json: Json = False) -> None:
    """Create a graph at ROOT from a schema file, with one branch: main."""
    g = Graph.init(root, schema)
    head = g.head(g.repo.info.default_branch)
    summary = {
        "root": root,
        "branch": g.repo.info.default_branch,
        "commit": head.id,
        "nodes": list(g.schema.nodes),
        "edges": list(g.schema.edges),
    }
    if json:
        print_json(summary)
        return
    console.print(
        f"Created graph [bold]{escape(root)}[/] on branch [cyan]{summary['branch']}[/] "
        f"(commit {short(head.id)})"
    )
    console.print(f"  node types: {', '.join(summary['nodes']) or '-'}")
    console.print(f"  edge types: {', '.join(summary['edges']) or '-'}")


def load(
    root: Root,
    file: Annotated[
        Path,
        typer.Argument(
            help="JSONL records, or Parquet or CSV with --table.",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    branch: TargetBranch = DEFAULT_BRANCH,
    mode: Annotated[
        LoadMode, typer.Option(help="append: new keys only; merge: upsert; overwrite: replace.")
    ] = LoadMode.append,
    table: Annotated[
        str | None,
        typer.Option("--table", "-t", help="Node or edge type of a Parquet or CSV file."),
    ] = None,
    message: Annotated[str | None, typer.Option("--message", "-m")] = None,
    coerce: Annotated[
        bool,
        typer.Option(
            "--coerce",
            help="Cast values of another type (a Parquet int column for a String) "
            "rather than refuse them; lossy casts still fail.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Load a file into BRANCH as one commit."""
    g = Graph.open(root)
    before = g.head(branch)
    rows_read = 0

    with load_bar(count_records(file), enabled=not json) as advance:

        def progress(rows: int) -> None:
            nonlocal rows_read
            rows_read += rows
            if advance is not None:
                advance(rows)

        commit = g.load(
            file,
            branch=branch,
            mode=mode.value,
            table=table,
            message=message,
            progress=progress,
            coerce=coerce,
        )
    summary = load_summary(g, branch, before, commit, rows_read)
    if json:
        print_json(summary)
    else:
        print_load_summary(summary)


def load_summary(
    g: Graph, branch: str, before: Commit, after: Commit, rows_read: int
) -> dict[str, Any]:
    """Commit id and, for each table the load changed, its rows now, the difference in
    rows, and how many rows it inserted, updated and deleted (a merge load that only
    updates changes no row count, so `delta` alone would read as no change)."""
    changes = g.diff(before.id, after.id, limit=0)
    new = g.snapshot(after.id)
    tables = {}
    for name, d in changes.items():
        rows = new.dataset(name).count_rows()
        tables[name] = {
            "rows": rows,
            "delta": d.counts["inserted"] - d.counts["deleted"],
            **d.counts,
        }
    return {
        "commit": after.id,
        "branch": branch,
        "message": after.message,
        "changed": after.id != before.id,
        "rows_read": rows_read,
        "tables": tables,
    }


def print_load_summary(summary: dict[str, Any]) -> None:
    commit, branch = short(summary["commit"]), summary["branch"]
    rows = rows_phrase(summary["rows_read"])
    if not summary["changed"]:
        console.print(f"Read {rows}; nothing changed: [cyan]{branch}[/] stays at {commit}")
        return
    console.print(
        f"Loaded {rows} into [cyan]{branch}[/] as commit "
        f"[bold]{commit}[/] ({escape(summary['message'])})"
    )
    # +inserted ~updated -deleted, as `graphlake diff` prints them.
    out = Table("table", Column("rows", justify="right"), Column("change", justify="right"))
    for name, n in summary["tables"].items():
        out.add_row(name, str(n["rows"]), f"+{n['inserted']} ~{n['updated']} -{n['deleted']}")
    console.print(out)
