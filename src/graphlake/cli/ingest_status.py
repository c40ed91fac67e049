"""`graphlake ingest-status ROOT [RUN_ID]`: the ingest runs of a graph, or one run's
progress per worker, from the records the run stored (see `graphlake.ingestion.status`).

Works while a run is going (from another shell or machine), after it finished, and after
its orchestrator died. Exit codes: 0 shown; 1 no such run or another failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from rich.cells import cell_len
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from graphlake.cli.options import Json, Root
from graphlake.cli.output import console, fits, plural, print_json, short, short_time
from graphlake.graph import Graph

# ingestion.status reads input files' headers with pyarrow and checks rows (Lance,
# DuckDB): imported when the command runs, not when the CLI starts.
if TYPE_CHECKING:
    from graphlake.ingestion.status import RunStatus, RunSummary


def ingest_status(
    root: Root,
    run_id: Annotated[
        str | None,
        typer.Argument(
            help="A run id: show its plan and per-worker progress. "
            "Without it: list the runs, newest first."
        ),
    ] = None,
    json: Json = False,
) -> None:
    """Show the graph's ingest runs (state, progress), or one run per worker."""
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.ingestion.status import list_runs, run_status

    graph = Graph.open(root)
    if run_id is None:
        runs = list_runs(graph)
        if json:
            print_json({"runs": [r.to_dict() for r in runs]})
        else:
            print_runs(runs)
        return
    status = run_status(graph, run_id)
    if json:
        print_json(status.to_dict())
    else:
        print_run(status)


def _state(state: str) -> str:
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.ingestion.status import ABANDONED, FAILED, FINISHED, RUNNING

    styles = {FINISHED: "green", RUNNING: "cyan", FAILED: "red", ABANDONED: "yellow"}
    style = styles.get(state)
    return f"[{style}]{state}[/]" if style else state


def _share(done: int, total: int) -> str:
    return f"{done:,}/{total:,}" + (f" ({done / total:.0%})" if total else "")


# The listing's columns, most useful first: those that do not fit the terminal are left
# out from the end and named under the table. Numbers, states, times and headers are never
# broken; run ids are copied into other commands, so never cut; a long branch name is
# abbreviated with "…".
_RUN_COLUMNS = ("run", "state", "done", "into", "created (UTC)", "workers", "records")


def print_runs(runs: list[RunSummary]) -> None:
    if not runs:
        console.print("No ingest runs.")
        return
    rows = [
        (
            r.run_id,
            _state(r.state),
            f"{_share(r.done, r.total)} {r.unit}",
            escape(r.into),
            short_time(r.created),
            str(r.workers),
            f"{r.rows:,}",
        )
        for r in runs
    ]
    shown = len(_RUN_COLUMNS)
    while True:
        out = _runs_table(rows, shown)
        if shown == 3 or fits(out, console.width):
            break
        shown -= 1
    console.print(out)


def _runs_table(rows: Sequence[tuple[str, ...]], shown: int) -> Table:
    hidden = _RUN_COLUMNS[shown:]
    caption = (
        f"{plural(len(hidden), 'column')} not shown: {', '.join(hidden)} (--json)"
        if hidden
        else None
    )
    out = Table(caption=caption, caption_justify="left")
    for i, name in enumerate(_RUN_COLUMNS[:shown]):
        if name == "into":
            out.add_column(name, no_wrap=True, overflow="ellipsis", min_width=6)
            continue
        # As wide as its widest value and header: rich must not shrink it (it would cut).
        width = max(cell_len(name), *(Text.from_markup(r[i]).cell_len for r in rows))
        right = name in ("done", "workers", "records")
        out.add_column(name, no_wrap=True, min_width=width, justify="right" if right else "left")
    for row in rows:
        out.add_row(*row[:shown])
    return out


def print_run(s: RunStatus) -> None:
    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.ingestion.status import FAILED, FINISHED

    what = f"table {s.table}" if s.table else "JSONL records"
    console.print(
        f"Ingest run [bold]{s.run_id}[/]: {_state(s.state)}, {s.format} ({what}) "
        f"into [cyan]{escape(s.into)}[/], created {short_time(s.created)} UTC"
    )
    console.print(
        f"{len(s.files)} input file(s), {s.workers} worker(s), commits every "
        f"{s.commit_every:,} {s.unit}, base {short(s.base)}; done "
        f"{_share(s.done, s.total)} {s.unit}, {s.rows:,} records"
    )
    if s.error:
        console.print(f"[red]last attempt failed:[/] {escape(s.error)}")
    if s.heartbeat and s.state not in (FINISHED, FAILED):
        console.print(f"last heartbeat {short_time(s.heartbeat)} UTC", style="dim")
    out = Table(  # numbers never broken; a long branch name folds (it is an id)
        Column("worker", no_wrap=True),
        Column("phase", no_wrap=True),
        Column("branch", overflow="fold"),
        Column("state", no_wrap=True),
        Column("done", justify="right", no_wrap=True),
        Column("records", justify="right", no_wrap=True),
    )
    for w in s.progress:
        out.add_row(
            f"w{w.worker}",
            w.phase,
            escape(w.branch),
            w.state,
            _share(w.done, w.total),
            f"{w.rows:,}",
        )
    console.print(out)
    if s.result is not None:
        commit = short(s.result.get("commit") or "")
        total = s.result.get("timings", {}).get("total")
        took = f" in {total:.2f}s" if total else ""
        console.print(
            f"Finished{took}: {s.result.get('rows', 0):,} records into "
            f"[cyan]{escape(s.into)}[/] as commit [bold]{commit}[/]"
        )
