"""`graphlake recover` and `graphlake fsck`: settle crashed publications; check invariants.

Both open the graph without the automatic recovery `open` does, so they see (and, for
`recover`, report) what a crash left behind. `fsck` changes nothing and exits 1 when it
finds a problem.
"""

from __future__ import annotations

from typing import Annotated

import typer

from graphlake.cli.options import Json, Root
from graphlake.cli.output import console, err_console, plural, print_json, short
from graphlake.graph import Graph
from graphlake.recovery.recover import COMPLETED


def recover(
    root: Root,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also settle records whose process may still run (on another host, or "
            "younger than the lease). Only when you know no writer is running.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Finish or roll back publications a crashed process left unfinished.

    A publication whose ref moved is completed (its cleanup is done); one that never
    became visible is rolled back (its unreferenced data is left for `graphlake gc`).
    """
    g = Graph.open(root, recover=False)
    report = g.recover(force=force)
    if json:
        print_json(report.to_dict())
        if report.corrupt:
            raise typer.Exit(1)
        return
    for r in report.recovered:
        what = (
            f"completed (commit {short(r.commit)})"
            if r.outcome == COMPLETED and r.commit
            else "rolled back (nothing was published)"
        )
        console.print(f"{r.op} on {r.branch!r}: {what}")
    for rid in report.in_flight:
        console.print(
            f"[yellow]left alone:[/] {rid} (its process may still be running; "
            f"use --force if you know it is not)"
        )
    for key in report.corrupt:
        err_console.print(f"[red]unreadable recovery record:[/] {key}")
    if not (report.recovered or report.in_flight or report.corrupt):
        console.print("nothing to recover")
    if report.corrupt:
        raise typer.Exit(1)


def fsck(
    root: Root,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Also diff every reachable commit against each of its parents (what log "
            "--stat, diff and merges need); costs one diff per commit.",
        ),
    ] = False,
    json: Json = False,
) -> None:
    """Check the graph's invariants without changing anything (exit 1 on problems).

    Refs point to commits; every commit reachable from a branch, its schema and its
    table versions exist; in every branch head keys are unique, edges have endpoints and
    all constraints hold; no writer can build on unpublished data; no unfinished
    publication is left. With --deep, every reachable commit diffs against its parents.
    """
    g = Graph.open(root, recover=False)
    report = g.fsck(deep=deep)
    if json:
        print_json(report.to_dict())
    else:
        for p in report.problems:
            console.print(f"[red]{p.check}[/] {p.where}: {p.message}")
        branches = "1 branch" if report.branches == 1 else f"{report.branches} branches"
        checked = (
            f"{branches}, {plural(report.commits, 'commit')}, "
            f"{plural(report.table_states, 'table state')}, "
            f"{plural(report.rows, 'head row')}"
        )
        if report.ok:
            console.print(f"ok: checked {checked}")
        else:
            console.print(f"{plural(len(report.problems), 'problem')} in {checked}")
    if not report.ok:
        raise typer.Exit(1)
