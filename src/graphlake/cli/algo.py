"""`graphlake algo`: a graph algorithm on one edge type at one revision."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root
from graphlake.cli.output import arrow_table, console, print_json, rows_phrase, table_rows
from graphlake.graph import Graph

# What the table shows unless --limit says otherwise (--json prints every row).
SHOWN_ROWS = 20


def algo(
    root: Root,
    name: Annotated[
        str,
        typer.Argument(
            help="pagerank, wcc, scc, louvain, leiden, kcore or shortest_paths (LadybugDB's "
            "names too: page_rank, weakly_connected_components, k_core_decomposition, ...)."
        ),
    ],
    edge_type: Annotated[str, typer.Argument(help="The edge type whose graph it runs on.")],
    branch: Branch = DEFAULT_BRANCH,
    damping: Annotated[
        float | None, typer.Option("--damping", help="pagerank: damping in (0, 1); 0.85.")
    ] = None,
    resolution: Annotated[
        float | None,
        typer.Option("--resolution", help="louvain, leiden: modularity resolution > 0; 1."),
    ] = None,
    iterations: Annotated[
        int | None, typer.Option("--iterations", help="leiden: iterations, 1..1000; 10.")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="louvain, leiden: random seed; 0.")
    ] = None,
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads",
            help="louvain: threads (1: repeatable); default OMP_NUM_THREADS, else the CPUs.",
        ),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="shortest_paths: key of the node the paths start at."),
    ] = None,
    weight: Annotated[
        str | None,
        typer.Option("--weight", help="shortest_paths: numeric edge property (default 1 each)."),
    ] = None,
    max_memory_mb: Annotated[
        int | None,
        typer.Option("--max-memory-mb", help="Refuse a run estimated past this; 4096."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            help=f"Rows to print (0: all); default {SHOWN_ROWS} in a table, all with --json.",
        ),
    ] = None,
    json: Json = False,
) -> None:
    """Run graph algorithm NAME on EDGE_TYPE as one revision holds it: one row per node
    (`id`, and `type` when EDGE_TYPE joins two node types) with its value, by id."""
    given = {
        "damping": damping,
        "resolution": resolution,
        "iterations": iterations,
        "seed": seed,
        "threads": threads,
        "source": source,
        "weight": weight,
        "max_memory_mb": max_memory_mb,
    }
    options: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    result = Graph.open(root).algo.run(name, edge_type, branch, **options)
    total = result.num_rows
    shown = limit if limit is not None else (0 if json else SHOWN_ROWS)
    if shown:
        result = result.slice(0, shown)
    if json:
        print_json(table_rows(result))
        return
    console.print(arrow_table(result))
    cut = total > result.num_rows
    more = f" (first {result.num_rows} of {total}; --limit 0: all)" if cut else ""
    console.print(f"{rows_phrase(total)} @ {escape(branch)}{more}", style="dim")
