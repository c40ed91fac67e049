"""One ingest worker: write one slice into its own branch, in resumable commits.

`run_slice` is what both engines run (in a spawned process or a Ray task). It opens the
graph itself, finds where its branch got to, and writes the rest of its slice in batches
of `commit_every` rows (JSONL: lines). Each commit carries the batch *and* the progress
marker `meta={"ingest_run", "worker", "offset", "rows"}` (`offset`: rows or lines of the
slice done, `rows`: records written), so the marker is exactly as durable as the data:
after a crash the next attempt continues after the last commit, and nothing is written
twice. Nodes and edges are written together; endpoint and `@card` checks are deferred
to the run's final merge_many, which sees every shard.

Failures come back as data (`WorkerReport.error`), see `graphlake.ingestion.errors`.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from graphlake.graph import Graph
from graphlake.ingestion.errors import ErrorInfo, IngestError
from graphlake.ingestion.plan import ALL, EDGES, NODES, Segment
from graphlake.ingestion.sources import InputFile, open_parquet
from graphlake.ingestion.written import WrittenReporter, written_key
from graphlake.write.jsonl import parse_json_line
from graphlake.write.load import group_records
from graphlake.write.publish import publish
from graphlake.write.transaction import Transaction

# Test hook: "<worker>:<commits>" makes that worker's process exit abruptly (os._exit)
# right after its n-th commit of an attempt, like a killed machine would.
CRASH_AFTER_ENV = "GRAPHLAKE_INGEST_CRASH_AFTER"
CRASH_EXIT_CODE = 75
_PARQUET_BATCH = 64 * 1024
# Checked once, by the merge of all shards, not per shard commit: an edge's endpoints or
# a new node's edges may sit in another shard (or a later commit of this one).
CROSS_SHARD_CHECKS = frozenset({"endpoint", "cardinality"})


@dataclass(frozen=True)
class WorkerTask:
    """Everything a worker needs; plain data, so it pickles to a process or a Ray task."""

    root: str
    storage_options: dict[str, str] | None
    run_id: str
    phase: str
    worker: int
    branch: str
    base: str
    table: str | None
    commit_every: int
    files: tuple[InputFile, ...]
    segments: tuple[Segment, ...]
    # False when the run has >= 2 workers: the shard's large commits then build no index
    # segments (see `TableStore.index_large_appends`). A 1-worker run fast-forwards
    # `into` to the shard's state, so its shard keeps its indexes up to date.
    index_appends: bool = True
    mode: str = "append"  # "merge": upsert, so keys the target holds are updated

    @property
    def size(self) -> int:
        return sum(s.rows for s in self.segments)

    def meta(self, offset: int, rows: int) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "ingest_run": self.run_id,
            "worker": self.worker,
            "offset": offset,
            "rows": rows,
        }
        if self.phase != ALL:
            meta["phase"] = self.phase
        return meta


@dataclass(frozen=True)
class WorkerReport:
    worker: int
    phase: str
    branch: str
    size: int  # rows (JSONL: lines) of the slice
    offset: int = 0  # how far the branch got
    rows: int = 0  # records the branch holds from this run
    resumed_from: int = 0  # offset when this attempt started
    commits: int = 0  # commits this attempt made
    seconds: float = 0.0
    head: str | None = None
    error: ErrorInfo | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.offset >= self.size


def run_slice(task: WorkerTask) -> WorkerReport:
    """Write the rest of `task`'s slice into its branch (see the module docstring)."""
    started = time.perf_counter()
    report = WorkerReport(task.worker, task.phase, task.branch, task.size)
    try:
        graph = Graph.open(task.root, task.storage_options)
        graph.repo.tables.index_large_appends = task.index_appends
        offset, rows = progress_of(graph, task)
        report = _replace(report, offset=offset, rows=rows, resumed_from=offset)
        head = graph.head(task.branch).id
        reporter = WrittenReporter(
            graph.repo.store, written_key(task.run_id, task.phase, task.worker)
        )
        graph.repo.tables.on_rows_written = reporter.rows
        for commits, (units, data) in enumerate(_batches(graph, task, offset), start=1):
            records = _count(data)
            reporter.batch(offset, units, records)
            offset += units
            rows += records
            head = _commit(graph, task, data, offset, rows)
            report = _replace(report, offset=offset, rows=rows, commits=commits, head=head)
            _maybe_crash(task.worker, commits)
        return _replace(report, head=head, seconds=time.perf_counter() - started)
    except Exception as exc:  # every failure goes back as data
        return _replace(report, error=ErrorInfo.of(exc), seconds=time.perf_counter() - started)


def _commit(graph: Graph, task: WorkerTask, data: Mapping[str, Any], offset: int, rows: int) -> str:
    """One shard commit of `data` with its progress marker; checks that need the other
    shards (an edge's endpoints, a node's edges under `@card`) are left to the merge."""
    txn = Transaction(graph.repo, task.branch, _message(task, offset), meta=task.meta(offset, rows))
    stage = txn.upsert if task.mode == "merge" else txn.insert
    for name, part in data.items():
        stage(name, part)
    return publish(
        graph.repo, task.branch, txn.message, txn.ops, txn.meta, deferred=CROSS_SHARD_CHECKS
    ).id


def progress_of(graph: Graph, task: WorkerTask) -> tuple[int, int]:
    """(offset, rows) the worker's branch has reached: 0 at the base commit, else its head
    commit's ingest marker. Any other head means someone else wrote to the branch."""
    head = graph.head(task.branch)
    if head.id == task.base:
        return 0, 0
    meta = head.meta
    if (
        meta.get("ingest_run") != task.run_id
        or meta.get("worker") != task.worker
        or meta.get("phase", ALL) != task.phase
    ):
        raise IngestError(
            f"branch {task.branch!r} moved outside ingest run {task.run_id}: its head "
            f"{head.id[:12]} is not an ingest commit of worker {task.worker}; delete the "
            f"branch to redo this slice"
        )
    return int(meta["offset"]), int(meta.get("rows", meta["offset"]))


def _message(task: WorkerTask, offset: int) -> str:
    phase = "" if task.phase == ALL else f" {task.phase}"
    return f"ingest {task.run_id} w{task.worker}{phase}: {offset}/{task.size}"


def _count(data: Mapping[str, Any]) -> int:
    return sum(part.num_rows if isinstance(part, pa.Table) else len(part) for part in data.values())


def _replace(report: WorkerReport, **changes: Any) -> WorkerReport:
    return replace(report, **changes)


def _maybe_crash(worker: int, commits: int) -> None:
    spec = os.environ.get(CRASH_AFTER_ENV)
    if not spec:
        return
    target, _, after = spec.partition(":")
    if int(target) == worker and commits >= int(after or 1):
        os._exit(CRASH_EXIT_CODE)


# --- reading a slice --------------------------------------------------------------------


def _batches(graph: Graph, task: WorkerTask, offset: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(units consumed, {table: rows}) per commit, starting `offset` units into the slice."""
    if not task.files:
        return
    if task.files[0].format == "parquet":
        if task.table is None:
            raise IngestError("a Parquet ingest needs a table")
        batches = _rebatch(_parquet_rows(task, offset), task.commit_every)
        for batch in read_ahead(batches):
            yield batch.num_rows, {task.table: batch}
    else:
        yield from _jsonl_batches(graph, task, offset)


def _remaining(segments: tuple[Segment, ...], offset: int) -> Iterator[tuple[Segment, int]]:
    """Each segment that still has rows after skipping `offset`, with its local skip."""
    for seg in segments:
        if offset >= seg.rows:
            offset -= seg.rows
            continue
        yield seg, offset
        offset = 0


def _parquet_rows(task: WorkerTask, offset: int) -> Iterator[pa.RecordBatch]:
    for seg, skip in _remaining(task.segments, offset):
        yield from read_parquet_range(task.files[seg.file].path, seg.start + skip, seg.stop)


def read_parquet_range(path: str, start: int, stop: int) -> Iterator[pa.RecordBatch]:
    """Rows [start, stop) of a Parquet file, reading only the row groups that hold them."""
    pf = open_parquet(path)
    md = pf.metadata
    groups: list[int] = []
    first_row: int | None = None
    at = 0
    for rg in range(md.num_row_groups):
        n = md.row_group(rg).num_rows
        if at + n > start and at < stop:
            groups.append(rg)
            first_row = at if first_row is None else first_row
        at += n
    if first_row is None:
        return
    pos = first_row
    for batch in pf.iter_batches(batch_size=_PARQUET_BATCH, row_groups=groups):
        a, b = max(start - pos, 0), min(stop - pos, batch.num_rows)
        if a < b:
            yield batch.slice(a, b - a)
        pos += batch.num_rows
        if pos >= stop:
            return


def _rebatch(batches: Iterator[pa.RecordBatch], size: int) -> Iterator[pa.Table]:
    """Tables of exactly `size` rows (the last may be smaller)."""
    buf: list[pa.RecordBatch] = []
    have = 0
    for batch in batches:
        while batch.num_rows:
            take = min(size - have, batch.num_rows)
            buf.append(batch.slice(0, take))
            have += take
            batch = batch.slice(take)
            if have == size:
                yield pa.Table.from_batches(buf)
                buf, have = [], 0
    if have:
        yield pa.Table.from_batches(buf)


_DONE = object()


def read_ahead(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """`items`, produced by a thread up to `depth` ahead of the consumer.

    The worker's commit (validation, Lance write, index) holds about one core; reading
    and decoding the next Parquet batch releases the GIL, so it overlaps with the commit
    instead of following it. An error in the producer is raised here, in order.
    """
    out: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((_DONE, None))
        except BaseException as exc:  # handed to the consumer
            put((_DONE, exc))

    thread = threading.Thread(target=produce, name="ingest-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = out.get()
            if exc is not None:
                raise exc
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
        thread.join()


def _jsonl_lines(task: WorkerTask, offset: int) -> Iterator[tuple[int, int, bytes]]:
    """(file index, 1-based line number, raw line) for the slice's lines after `offset`."""
    for seg, skip in _remaining(task.segments, offset):
        f_info = task.files[seg.file]
        with open(f_info.path, "rb") as f:
            f.seek(seg.byte_start or 0)
            for _ in range(skip):
                f.readline()
            for n in range(seg.start + skip + 1, seg.stop + 1):
                raw = f.readline()
                if not raw:
                    raise IngestError(
                        f"{f_info.path} ended at line {n - 1}; the ingest plan "
                        f"expected {f_info.rows} lines (was it truncated?)"
                    )
                yield seg.file, n, raw


def _wanted(rec: Any, phase: str) -> bool:
    """Whether a record belongs to this phase. Malformed records go to the first phase
    (all or nodes), where `group_records` reports them."""
    is_edge = isinstance(rec, Mapping) and "type" not in rec and "edge" in rec
    if phase == NODES:
        return not is_edge
    if phase == EDGES:
        return is_edge
    return True


def _jsonl_batches(
    graph: Graph, task: WorkerTask, offset: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = _jsonl_lines(task, offset)
    while True:
        units = 0
        records: dict[int, list[tuple[int, Any]]] = {}
        for file_index, n, raw in lines:
            units += 1
            if raw.strip():
                rec = parse_json_line(raw, task.files[file_index].path, n)
                if _wanted(rec, task.phase):
                    records.setdefault(file_index, []).append((n, rec))
            if units == task.commit_every:
                break
        if units == 0:
            return
        yield units, _grouped(graph, task, records)


def _grouped(
    graph: Graph, task: WorkerTask, records: dict[int, list[tuple[int, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    schema = graph.repo.schemas.of(graph.repo.commits.get(task.base))  # the shard's schema
    for file_index, recs in records.items():
        for name, rows in group_records(schema, recs, task.files[file_index].path, None).items():
            out.setdefault(name, []).extend(rows)
    return {n: out[n] for n in (*schema.nodes, *schema.edges) if n in out}
