"""`graphlake ingest`: sharded parallel load, landing as one merge_many commit.

It uses the exit codes of `graphlake merge`, so scripts can tell a conflict from a
failure: 0 done; 1 conflicts (printed; nothing was published); 2 any other failure (one
`error: ...` line on stderr) and usage errors.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Column, Table

from graphlake.cli.merge import EXIT_ERROR, merge_errors
from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import CommandError, console, fail, print_json, short
from graphlake.graph import Graph
from graphlake.ingestion import IngestResult
from graphlake.merge.result import MERGED, NO_CHANGE, MergeResult


class Engine(StrEnum):
    process = "process"
    ray = "ray"


class Mode(StrEnum):
    append = "append"
    merge = "merge"


Into = Annotated[str, typer.Option("--into", "-i", help="Branch to merge into.")]


def ingest(
    root: Root,
    inputs: Annotated[
        list[str] | None,
        typer.Argument(help="Parquet files (with --table), JSONL files, or folders of them."),
    ] = None,
    table: Annotated[
        str | None, typer.Option("--table", "-t", help="Node or edge type of Parquet input.")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            "-w",
            min=1,
            help="Parallel workers. Default: the CPU count (or the run's plan when resuming).",
        ),
    ] = None,
    engine: Annotated[
        Engine,
        typer.Option(
            help="process: spawned processes; ray: Ray tasks (pip install graphlake\\[ray])."
        ),
    ] = Engine.process,
    into: Into = DEFAULT_BRANCH,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="Name of the run; the same id resumes an interrupted run. Default: a new ULID.",
        ),
    ] = None,
    commit_every: Annotated[
        int | None,
        typer.Option(
            "--commit-every", min=1, help="Rows (JSONL: lines) per worker commit. Default 100000."
        ),
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="Join this Ray cluster (engine ray).")
    ] = None,
    mode: Annotated[
        Mode,
        typer.Option(
            help="append: new keys only (keys the target holds are refused "
            "before any work); merge: upsert them."
        ),
    ] = Mode.append,
    abort: Annotated[
        str | None,
        typer.Option(
            "--abort",
            metavar="RUN_ID",
            help="Remove a failed or abandoned run's shard branches "
            "and records instead of ingesting.",
        ),
    ] = None,
    json: Json = False,
) -> None:
    """Load INPUTS into --into with parallel workers, each on its own branch, then merge
    the branches in one commit. Rerun with the same --run-id to resume, or remove a
    failed run with --abort RUN_ID.

    Exit codes: 0 ingested (or the run had finished already), 1 conflicts, 2 error.
    """
    if abort is not None:
        _abort(root, abort, inputs, json)
        return
    if not inputs:
        raise fail(CommandError("ingest needs INPUT files (or --abort RUN_ID)"), EXIT_ERROR)
    with merge_errors(json, "ingest", into):
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.ingestion.orchestrator import run_ingest

        result = run_ingest(
            Graph.open(root),
            inputs,
            table=table,
            workers=workers,
            engine=engine.value,
            into=into,
            run_id=run_id,
            commit_every=commit_every,
            progress=not json,
            ray_address=ray_address,
            mode=mode.value,
        )
    if json:
        print_json(result.to_dict())
    else:
        print_ingest(result)


def _abort(root: str, run_id: str, inputs: list[str] | None, json: bool) -> None:
    if inputs:
        raise fail(CommandError("--abort takes a run id, not INPUT files"), EXIT_ERROR)
    with merge_errors(json, "ingest", DEFAULT_BRANCH):
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.ingestion.abort import abort_ingest

        removed = abort_ingest(Graph.open(root), run_id)
    if json:
        print_json({"run_id": run_id, "aborted": True, "branches_removed": removed})
    else:
        console.print(
            f"Aborted ingest run [bold]{escape(run_id)}[/]: removed "
            f"{len(removed)} shard branch(es) and its records"
        )


def print_ingest(r: IngestResult) -> None:
    into, commit = f"[cyan]{escape(r.into)}[/]", short(r.commit or "")
    if r.already_complete:
        console.print(
            f"Ingest run [bold]{r.run_id}[/] had finished already: {r.rows:,} rows "
            f"in {into} at commit {commit}; nothing to do"
        )
        return
    resumed = " (resumed)" if r.resumed else ""
    console.print(
        f"Ingested {r.rows:,} rows into {into} with {r.workers} workers as commit "
        f"[bold]{commit}[/] (run {r.run_id}{resumed})"
    )
    out = Table("worker", Column("rows", justify="right"), title="workers", title_justify="left")
    for i, rows in enumerate(r.rows_per_worker):
        out.add_row(f"w{i}", f"{rows:,}")
    console.print(out)
    for phase, m in r.merges.items():
        print_shard_merge(phase, m)
    total = r.timings.get("total", 0.0)
    rate = f", {r.rows / total:,.0f} rows/s" if total else ""
    parts = ", ".join(f"{k} {v:.2f}s" for k, v in r.timings.items() if k != "total")
    console.print(f"took {total:.2f}s{rate} ({parts})", style="dim")


def print_shard_merge(phase: str, m: MergeResult) -> None:
    """One line for the merge of the shards, and per changed table its route and how
    many rows were adopted zero-copy (the shard list itself is left out: it is long)."""
    what = "" if phase == "all" else f" ({phase})"
    if m.outcome == MERGED:
        line = (
            f"merged the shards{what} as commit [bold]{short(m.commit or '')}[/] "
            f"(base {short(m.base or '')})"
        )
    else:
        line = f"shards{what}: {m.outcome.replace('_', ' ')} (head {short(m.commit or '')})"
    console.print(line)
    changed = {n: s for n, s in m.stats.items() if s.route != NO_CHANGE}
    if not changed:
        return
    out = Table(
        "table",
        Column("route", no_wrap=True),
        Column("rows", justify="right"),
        Column("adopted", justify="right"),
        Column("copied", justify="right"),
    )
    for name, s in changed.items():
        out.add_row(name, s.route, f"{s.source_changes:,}", f"{s.adopted_rows:,}", f"{s.effects:,}")
    console.print(out)
