"""`graphlake search`: vector, full-text or hybrid search on one revision."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape

from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import arrow_table, console, print_json, rows_phrase, table_rows
from graphlake.errors import SearchError
from graphlake.graph import Graph

if TYPE_CHECKING:  # search.query loads Lance: not at the CLI's start-up
    from graphlake.search.query import SearchPlan

# A query vector file holds one JSON array of numbers; this bounds what is read.
MAX_VECTOR_FILE_BYTES = 1 << 20


def search(
    root: Root,
    type: Annotated[str, typer.Argument(help="Node or edge type to search.")],
    near: Annotated[
        str | None, typer.Option("--near", help="Key of a node whose own vector is the query.")
    ] = None,
    vector_file: Annotated[
        Path | None,
        typer.Option(
            "--vector-file", help="File holding the query vector as a JSON array of numbers."
        ),
    ] = None,
    text: Annotated[
        str | None,
        typer.Option(
            "--text",
            help="Full-text (BM25) query on the @search properties; with --near or "
            "--vector-file, a hybrid (RRF) search.",
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", help="How many rows to return.")] = 10,
    where: Annotated[
        str | None, typer.Option("--where", help='Filter applied before ranking, e.g. "age > 30".')
    ] = None,
    on: Annotated[
        list[str] | None,
        typer.Option("--on", help="Property to search (repeatable); default: the declared ones."),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            "-c",
            help="Comma-separated columns to return (scores are always added), e.g. id,title.",
        ),
    ] = None,
    branch: Branch = DEFAULT_BRANCH,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Report rows searched through an index vs exactly; no rows."
        ),
    ] = False,
    json: Json = False,
) -> None:
    """The K best rows of TYPE on one revision: nearest to --near / --vector-file
    (`_distance`), best --text matches (`_score`), or both fused (`_rrf`)."""
    vector = _read_vector(vector_file) if vector_file is not None else None
    if near is None and vector is None and text is None:
        raise SearchError('give --near KEY, --vector-file F or --text "..."')
    result = Graph.open(root).search(
        type,
        vector=vector,
        text=text,
        k=k,
        where=where,
        branch=branch,
        near=near,
        on=tuple(on or ()),
        explain=explain,
        columns=_names(columns),
    )
    if explain:
        plan = cast("SearchPlan", result)  # explain=True returns the plan (Graph.search)
        if json:
            print_json(plan.to_dict())
            return
        for c in plan.coverage:
            console.print(
                f"{escape(c.property)}: {c.indexed_rows} rows through "
                f"{escape(c.index or 'no index')}"
                f"{f' ({c.index_type})' if c.index_type else ''}, "
                f"{c.exact_rows} searched exactly"
            )
        return
    rows: Any = result  # a pyarrow Table (explain=False)
    if json:
        print_json(table_rows(rows))
        return
    console.print(arrow_table(rows))
    console.print(f"{rows_phrase(rows.num_rows)} @ {escape(branch)}", style="dim")


def _names(columns: str | None) -> list[str] | None:
    """`"id, title,"` -> `["id", "title"]`; nothing named: every column."""
    names = [c.strip() for c in (columns or "").split(",") if c.strip()]
    return list(dict.fromkeys(names)) or None


def _read_vector(path: Path) -> list[float]:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_VECTOR_FILE_BYTES + 1)
    except OSError as exc:
        raise SearchError(f"cannot read vector file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_VECTOR_FILE_BYTES:
        raise SearchError(f"vector file {path} is larger than {MAX_VECTOR_FILE_BYTES} bytes")
    try:
        value = jsonlib.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise SearchError(f"vector file {path} is not JSON (expected [0.1, 0.2, ...])") from None
    if not isinstance(value, list):
        raise SearchError(f"vector file {path} must hold one JSON array of numbers")
    return value
