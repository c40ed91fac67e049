"""`graphlake query`: an openCypher read query over one branch or commit."""

from __future__ import annotations

import json as jsonlib
from typing import Annotated, Any

import typer
from rich.markup import escape

from graphlake.cli.interrupt import Timeout, interruptible
from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import (
    CommandError,
    arrow_table,
    console,
    print_json,
    rows_phrase,
    table_rows,
)
from graphlake.graph import Graph
from graphlake.query.explained import logical_plan_lines


def query(
    root: Root,
    cypher: Annotated[
        str, typer.Argument(help='One read query, e.g. "MATCH (p:Person) RETURN p.name".')
    ],
    branch: Branch = DEFAULT_BRANCH,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            help="A parameter, name=value; the value is read as JSON when it "
            'parses (30, true, [1,2], "x"), as text otherwise.',
        ),
    ] = None,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Fail rather than return more rows.")
    ] = 10_000,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Show the plan: the logical operators with their executors, then each "
            "step run, its rows and its SQL.",
        ),
    ] = False,
    json: Json = False,
    timeout: Timeout = None,
) -> None:
    """Run an openCypher read query (node labels are node types, relationship types are
    edge types); see README "Cypher queries" for the supported subset. Ctrl-C stops it
    (exit 130)."""
    # on first use only: loads lance, duckdb, pyarrow (start-up time)
    from graphlake.read.sql import DEFAULT_TIMEOUT_S

    params = parse_params(param or [])
    timeout_s = timeout or DEFAULT_TIMEOUT_S
    result = interruptible(
        lambda: Graph.open(root).query(
            cypher, params, branch, max_rows=max_rows, explain=explain, timeout_s=timeout_s
        ),
        timeout_s,
    )
    logical = logical_plan_lines(result) if explain else None
    if json:  # with --explain: the logical plan's lines and the steps run
        steps = table_rows(result)
        print_json(steps if not explain else {"logical_plan": logical, "steps": steps})
        return
    if logical is not None:  # the logical plan, each operator with its executor
        console.print(escape("\n".join(logical)), style="cyan", highlight=False)
    console.print(arrow_table(result))
    console.print(f"{rows_phrase(result.num_rows)} @ {escape(branch)}", style="dim")


def parse_params(items: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--param {item!r}: write name=value")
        try:
            params[name.strip()] = jsonlib.loads(text)
        except ValueError:
            params[name.strip()] = text
    return params
