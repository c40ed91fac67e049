"""`ingest`: N workers load disjoint slices into their own branches; one merge_many.

    run = validate -> plan (stored once) -> shard branches from the plan's base commit
          -> workers (resumable commits) -> merge_many -> done.json -> delete shards

Everything that can be checked is checked before any branch exists (inputs exist and
parse, table known, engine known and installed, numbers positive): bad input leaves the
graph as it was. A worker failure (a bad row in its slice) is raised with its original
type after the other workers finish; nothing is merged, and a rerun with the same run
id resumes each worker after its last commit.

Nodes and edges land together, as ONE commit on the target whatever the input mixes:
each shard writes its slice's nodes and edges, deferring the checks that need other
shards (endpoints, `@card`) to the final merge_many, which checks the merged result.
(Plans stored by earlier versions may have two phases, nodes then edges; they still run.)
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphlake import faults
from graphlake.catalog.names import validate_identifier
from graphlake.errors import BranchNotFoundError, DataError, UnknownTableError
from graphlake.ingestion import plan as P
from graphlake.ingestion import ray_source
from graphlake.ingestion.abort import refuse_if_aborted
from graphlake.ingestion.attempt import AttemptRecord
from graphlake.ingestion.engines import check_engine, make_engine
from graphlake.ingestion.errors import IngestError
from graphlake.ingestion.existing import refuse_existing_keys
from graphlake.ingestion.guard import refuse_in_spawned_bootstrap
from graphlake.ingestion.result import IngestResult
from graphlake.ingestion.runner import Run
from graphlake.ingestion.sources import (
    Format,
    InputFile,
    JsonlScan,
    check_jsonl_header,
    check_parquet,
    common_format,
    input_paths,
    scan_jsonl,
    stat_file,
)
from graphlake.ingestion.written import remove_reports

if TYPE_CHECKING:
    from graphlake.graph import Graph
    from graphlake.schema.model import Schema

DEFAULT_COMMIT_EVERY = 100_000
Sources = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def run_ingest(
    graph: Graph,
    sources: Sources,
    *,
    table: str | None = None,
    workers: int | None = None,
    engine: str = "process",
    into: str = "main",
    run_id: str | None = None,
    commit_every: int | None = None,
    progress: bool = True,
    strict_disjoint: bool = True,
    storage_options: dict[str, str] | None = None,
    ray_address: str | None = None,
    mode: str = "append",
    staging: str | os.PathLike[str] | None = None,
) -> IngestResult:
    """Load `sources` into branch `into` with `workers` parallel workers, as one merge.

    `sources`: a Parquet file (needs `table=`), a JSONL file in graphlake's load format,
    a list of such files, a folder of them (one format per run), or a `ray.data.Dataset`
    (needs `table=`; Ray writes it as Parquet into `staging`, a folder every Ray node can
    write, by default `$TMPDIR/graphlake-ray-<run id>`: see `ingestion/ray_source.py`).
    `workers` defaults to the stored plan's (rerun) or the CPU count; `commit_every`
    (rows, JSONL: lines per worker commit) to the plan's or 100,000. `engine`:
    "process" (spawned processes) or "ray" (`pip install graphlake[ray]`; `ray_address`
    joins an existing cluster).
    `run_id` names the run (a fresh ULID by default); calling again with the same id
    resumes it, or returns the recorded result once it has finished.
    `strict_disjoint=True` refuses any key that two slices both write.
    `mode="append"` (default) inserts: keys the target holds already are refused before
    any worker starts. `mode="merge"` upserts: such keys are updated (only the given
    properties), so a rerun of the same input with a new run id changes nothing.
    """
    started = time.perf_counter()
    refuse_in_spawned_bootstrap()
    check_engine(engine)
    for name, value in (("workers", workers), ("commit_every", commit_every)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise DataError(f"{name} must be a positive integer, got {value!r}")
    if mode not in P.MODES:
        raise DataError(f"unknown ingest mode {mode!r} (use one of: {', '.join(P.MODES)})")
    if run_id is not None:
        validate_identifier(run_id, "ingest run id")
    options = graph.storage_options if storage_options is None else storage_options
    store = graph.repo.store
    staged: Path | None = None
    if ray_source.is_ray_dataset(sources):
        if run_id is None:
            # python-ulid reads package metadata on import: only when needed
            from ulid import ULID

            run_id = str(ULID())
        staged = ray_source.staging_dir(run_id, staging)
        if graph.repo.store.get(P.run_key(run_id, P.DONE_FILE)) is None:
            ray_source.check_dataset(sources, graph.repo.schemas.of(graph.head(into)), table)
            ray_source.stage(sources, staged)
        sources = staged

    if run_id is not None:
        recorded = _recorded(graph, run_id, sources, table, into, workers, commit_every, mode)
        if recorded is not None:
            if staged is not None:
                ray_source.remove(staged)
            return recorded
    head = graph.head(into)  # an unknown branch fails here
    inputs = _validate_inputs(graph.repo.schemas.of(head), sources, table)

    plan: P.Plan | None = P.load_plan(store, run_id) if run_id is not None else None
    resumed = plan is not None
    if plan is None:
        if mode == "append":
            refuse_existing_keys(graph, head, inputs.format, inputs.paths, table, into)
        plan = _make_plan(inputs, table, into, head.id, run_id, workers, commit_every, mode)
        plan = P.store_plan(store, plan)  # another attempt may have stored it first
    _refuse_contradictions(plan, inputs, table, into, workers, commit_every, mode)
    plan = P.refresh_changed_files(plan)
    planned = time.perf_counter()
    with AttemptRecord(store, plan.run_id):  # for `graphlake.ingestion.status`
        refuse_if_aborted(store, plan.run_id)  # after the heartbeat: see abort.py
        result = _run(
            graph,
            plan,
            engine,
            options,
            strict_disjoint,
            progress,
            ray_address,
            resumed,
            planned - started,
        )
    if staged is not None:
        ray_source.remove(staged)
    result.timings["total"] = time.perf_counter() - started
    return result


def _run(
    graph: Graph,
    plan: P.Plan,
    engine: str,
    options: dict[str, str] | None,
    strict_disjoint: bool,
    progress: bool,
    ray_address: str | None,
    resumed: bool,
    plan_seconds: float,
) -> IngestResult:
    """Workers and merges, phase by phase; then done.json and the shard names removed."""
    run = Run(graph, plan, options, strict_disjoint, progress)
    eng = make_engine(engine, len(plan.slices), ray_address)
    try:
        for phase in plan.phases:
            run.phase(eng, phase)
    finally:
        eng.close()

    result = IngestResult(
        run_id=plan.run_id,
        into=plan.into,
        commit=run.last_commit,
        rows=sum(run.rows),
        rows_per_worker=run.rows,
        workers=len(plan.slices),
        merges=run.merges,
        timings={"plan": plan_seconds, "workers": run.worker_seconds, "merge": run.merge_seconds},
        resumed=resumed,
    )
    done = time.perf_counter()
    faults.hit("ingest.after_merge")
    graph.repo.store.create(P.run_key(plan.run_id, P.DONE_FILE), _done_json(result))
    _delete_branches(graph, plan)
    remove_reports(graph.repo.store, plan.run_id)
    result.timings["cleanup"] = time.perf_counter() - done
    return result


# --- validation and planning ------------------------------------------------------------


@dataclass(frozen=True)
class _Inputs:
    format: Format
    paths: list[Path]
    rows: dict[int, int]  # Parquet rows per file (from the metadata)


def _validate_inputs(schema: Schema, sources: Sources, table: str | None) -> _Inputs:
    """Check the inputs against `schema`, the one in force at the target's head."""
    paths = input_paths(sources)
    fmt = common_format(paths)
    rows: dict[int, int] = {}
    if fmt == "parquet":
        if table is None:
            raise DataError("ingesting Parquet needs a table (table= / --table)")
        t = schema.table(table)
        if t is None:
            known = ", ".join(schema.table_names)
            raise UnknownTableError(f"unknown node or edge type {table!r} (known: {known})")
        for i, path in enumerate(paths):
            rows[i] = check_parquet(path, t)
    else:
        if table is not None:
            raise DataError(
                "a table (table= / --table) applies to Parquet input only; "
                "JSONL records name their own type"
            )
        found = [check_jsonl_header(schema, path) for path in paths]
        if not any(found):
            raise DataError(f"nothing to ingest: {', '.join(map(str, paths))} hold no records")
    return _Inputs(fmt, paths, rows)


def _make_plan(
    inputs: _Inputs,
    table: str | None,
    into: str,
    base: str,
    run_id: str | None,
    workers: int | None,
    commit_every: int | None,
    mode: str,
) -> P.Plan:
    # python-ulid reads package metadata on import: only when needed
    from ulid import ULID

    scans: dict[int, JsonlScan] = {}
    files: list[InputFile] = []
    for i, path in enumerate(inputs.paths):
        if inputs.format == "jsonl":
            scans[i] = scan_jsonl(path)
            files.append(stat_file(path, "jsonl", scans[i].lines))
        else:
            files.append(stat_file(path, "parquet", inputs.rows[i]))
    total = sum(f.rows for f in files)
    if total == 0:
        raise DataError(f"nothing to ingest: {', '.join(map(str, inputs.paths))} hold no rows")
    asked = workers if workers is not None else (os.cpu_count() or 1)
    slices = P.split(files, asked)
    if scans:
        slices = P.with_byte_offsets(files, slices, scans)
    return P.Plan(
        run_id=run_id or str(ULID()),
        format=inputs.format,
        table=table,
        into=into,
        base=base,
        workers=asked,
        commit_every=commit_every or DEFAULT_COMMIT_EVERY,
        files=tuple(files),
        slices=tuple(slices),
        mode=mode,
    )


def _refuse_contradictions(
    plan: P.Plan,
    inputs: _Inputs,
    table: str | None,
    into: str,
    workers: int | None,
    commit_every: int | None,
    mode: str,
) -> None:
    diffs = P.contradictions(
        plan,
        paths=[str(p) for p in inputs.paths],
        table=table,
        into=into,
        workers=workers,
        commit_every=commit_every,
        mode=mode,
    )
    if diffs:
        raise IngestError(
            f"ingest run {plan.run_id} was planned with other arguments: "
            f"{'; '.join(diffs)}. Rerun with the original arguments, or use "
            f"another run id"
        )


def _recorded(
    graph: Graph,
    run_id: str,
    sources: Sources,
    table: str | None,
    into: str,
    workers: int | None,
    commit_every: int | None,
    mode: str,
) -> IngestResult | None:
    """The result of a finished run (shard branches a crash left are removed), or None."""
    data = graph.repo.store.get(P.run_key(run_id, P.DONE_FILE))
    if data is None:
        return None
    plan = P.load_plan(graph.repo.store, run_id)
    if plan is not None:
        try:
            paths = [str(p) for p in input_paths(sources)]
        except DataError:  # inputs removed since: compare the other arguments only
            paths = [f.path for f in plan.files]
        diffs = P.contradictions(
            plan,
            paths=paths,
            table=table,
            into=into,
            workers=workers,
            commit_every=commit_every,
            mode=mode,
        )
        if diffs:
            raise IngestError(
                f"ingest run {run_id} finished with other arguments: {'; '.join(diffs)}"
            )
        _delete_branches(graph, plan)
    remove_reports(graph.repo.store, run_id)  # a crash after done.json may have left them
    result = IngestResult.from_dict(json.loads(data))
    result.already_complete = True
    return result


def _done_json(result: IngestResult) -> bytes:
    return json.dumps(result.to_dict(), indent=1).encode("utf-8")


def _delete_branches(graph: Graph, plan: P.Plan) -> None:
    """Remove the shard branch names. Their Lance data stays: the merge references it."""
    for phase in plan.phases:
        for branch in plan.branches(phase):
            with contextlib.suppress(BranchNotFoundError):
                graph.delete_branch(branch)
            faults.hit("ingest.during_cleanup")
