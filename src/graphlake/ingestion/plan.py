"""The plan of an ingest run: input files, slices, table, target, base commit.

Rows (Parquet) or lines (JSONL) of all input files, in order, are cut into `workers`
contiguous slices of equal size (+-1); a slice is a list of per-file segments. JSONL
segments also carry the byte offsets of their first and end lines, so a worker seeks
straight to its slice.

The plan is written once per run id with a conditional create under
`_graphlake/ingest/<run_id>/plan.json`; a rerun reads it back, so every attempt of a run
works on exactly the same slices and the same base commit.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphlake.catalog.names import validate_identifier
from graphlake.ingestion.errors import IngestError
from graphlake.ingestion.sources import (
    Format,
    InputFile,
    JsonlScan,
    line_offsets,
    open_parquet,
    scan_jsonl,
)

if TYPE_CHECKING:
    from graphlake.catalog.store import ObjectStore

PLAN_FORMAT = 1
RUNS_DIR = "_graphlake/ingest"
ALL = "all"
MODES = ("append", "merge")  # workers insert (new keys only) or upsert
NODES = "nodes"
EDGES = "edges"


# The records of a run under `RUNS_DIR/<run_id>/`: its plan, one per merged phase, and
# the result once it has finished (see also `attempt.py`).
PLAN_FILE = "plan.json"
DONE_FILE = "done.json"
# Present while `abort_ingest` removes the run; a rerun that finds it stops (see abort.py).
ABORT_FILE = "aborting.json"


def phase_file(phase: str) -> str:
    return f"phase-{phase}.json"


def run_key(run_id: str, name: str) -> str:
    return f"{RUNS_DIR}/{validate_identifier(run_id, 'ingest run id')}/{name}"


@dataclass(frozen=True)
class Segment:
    """Rows (or lines) [start, stop) of input file `file`; JSONL also has byte offsets."""

    file: int
    start: int
    stop: int
    byte_start: int | None = None
    byte_stop: int | None = None

    @property
    def rows(self) -> int:
        return self.stop - self.start

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "start": self.start,
            "stop": self.stop,
            "byte_start": self.byte_start,
            "byte_stop": self.byte_stop,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Segment:
        return cls(
            int(d["file"]), int(d["start"]), int(d["stop"]), d.get("byte_start"), d.get("byte_stop")
        )


@dataclass(frozen=True)
class Slice:
    """What one worker ingests: its segments, in order; `rows` is the slice size."""

    worker: int
    segments: tuple[Segment, ...]

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.segments)

    def to_dict(self) -> dict[str, Any]:
        return {"worker": self.worker, "segments": [s.to_dict() for s in self.segments]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Slice:
        return cls(int(d["worker"]), tuple(Segment.from_dict(s) for s in d["segments"]))


@dataclass(frozen=True)
class Plan:
    run_id: str
    format: Format
    table: str | None
    into: str
    base: str  # commit id every shard branch starts from
    workers: int  # as requested; len(slices) may be smaller (fewer rows than workers)
    commit_every: int
    files: tuple[InputFile, ...]
    slices: tuple[Slice, ...]
    phases: tuple[str, ...] = (ALL,)
    mode: str = "append"
    created: str = field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat())

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)

    def branch(self, phase: str, worker: int) -> str:
        prefix = f"ingest/{self.run_id}" if phase == ALL else f"ingest/{self.run_id}/{phase}"
        return f"{prefix}/w{worker}"

    def branches(self, phase: str) -> list[str]:
        return [self.branch(phase, s.worker) for s in self.slices]

    def to_json(self) -> bytes:
        obj = {
            "format_version": PLAN_FORMAT,
            "run_id": self.run_id,
            "format": self.format,
            "table": self.table,
            "into": self.into,
            "base": self.base,
            "workers": self.workers,
            "commit_every": self.commit_every,
            "files": [f.to_dict() for f in self.files],
            "slices": [s.to_dict() for s in self.slices],
            "phases": list(self.phases),
            "mode": self.mode,
            "created": self.created,
        }
        return json.dumps(obj, indent=1).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Plan:
        try:
            obj = json.loads(data)
            if obj.get("format_version") != PLAN_FORMAT:
                raise ValueError(f"unknown plan format {obj.get('format_version')!r}")
            return cls(
                run_id=obj["run_id"],
                format=obj["format"],
                table=obj["table"],
                into=obj["into"],
                base=obj["base"],
                workers=int(obj["workers"]),
                commit_every=int(obj["commit_every"]),
                files=tuple(InputFile.from_dict(f) for f in obj["files"]),
                slices=tuple(Slice.from_dict(s) for s in obj["slices"]),
                phases=tuple(obj["phases"]),
                mode=obj.get("mode", "append"),
                created=obj["created"],
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise IngestError(f"stored ingest plan is corrupt: {exc}") from exc


# --- splitting --------------------------------------------------------------------------


def cut_points(total: int, workers: int) -> list[int]:
    """`workers + 1` boundaries of equal slices (+-1) of `total` rows."""
    return [i * total // workers for i in range(workers + 1)]


def split(files: Sequence[InputFile], workers: int) -> list[Slice]:
    """Cut the rows of `files` (in order) into at most `workers` non-empty slices."""
    total = sum(f.rows for f in files)
    n = max(1, min(workers, total))
    cuts = cut_points(total, n)
    slices: list[Slice] = []
    for w in range(n):
        lo, hi = cuts[w], cuts[w + 1]
        segments: list[Segment] = []
        first = 0
        for i, f in enumerate(files):
            a, b = max(lo, first), min(hi, first + f.rows)
            if a < b:
                segments.append(Segment(i, a - first, b - first))
            first += f.rows
        slices.append(Slice(w, tuple(segments)))
    return slices


def with_byte_offsets(
    files: Sequence[InputFile], slices: Sequence[Slice], scans: dict[int, JsonlScan]
) -> list[Slice]:
    """`slices` with the byte offsets of each segment's start and stop line, for the
    segments of the files in `scans` (others are kept as they are)."""
    wanted: dict[int, set[int]] = {}
    for s in slices:
        for seg in s.segments:
            if seg.file in scans:
                wanted.setdefault(seg.file, set()).update((seg.start, seg.stop))
    offsets = {
        i: line_offsets(Path(files[i].path), scans[i], sorted(lines)) for i, lines in wanted.items()
    }

    def located(seg: Segment) -> Segment:
        if seg.file not in offsets:
            return seg
        at = offsets[seg.file]
        return replace(seg, byte_start=at[seg.start], byte_stop=at[seg.stop])

    return [Slice(s.worker, tuple(located(seg) for seg in s.segments)) for s in slices]


def refresh_changed_files(plan: Plan) -> Plan:
    """The plan with byte offsets recomputed for JSONL files edited since it was made.

    A fix (say of a bad line) may change byte offsets but must keep the line count: the
    slices are defined by lines. Parquet slices are row ranges: only the count matters.
    Lines or rows already committed are not read again.
    """
    scans: dict[int, JsonlScan] = {}
    for i, f in enumerate(plan.files):
        if f.unchanged():
            continue
        path = Path(f.path)
        if not path.is_file():
            raise IngestError(f"input {f.path} of ingest run {plan.run_id} is gone")
        if f.format == "parquet":
            rows = int(open_parquet(path).metadata.num_rows)
        else:
            scans[i] = scan_jsonl(path)
            rows = scans[i].lines
        if rows != f.rows:
            unit = "rows" if f.format == "parquet" else "lines"
            raise IngestError(
                f"input {f.path} changed since ingest run {plan.run_id} started: it had "
                f"{f.rows} {unit}, now {rows}; a fix must keep the {unit} count, or start a "
                f"new run (another run id)"
            )
    if not scans:
        return plan
    return replace(plan, slices=tuple(with_byte_offsets(plan.files, plan.slices, scans)))


# --- storing ----------------------------------------------------------------------------


def store_plan(store: ObjectStore, plan: Plan) -> Plan:
    """Write the plan if the run has none yet; return the run's plan either way."""
    key = run_key(plan.run_id, PLAN_FILE)
    if store.create(key, plan.to_json()):
        return plan
    existing = load_plan(store, plan.run_id)
    if existing is None:
        raise IngestError(f"ingest plan {key} vanished while being written")
    return existing


def load_plan(store: ObjectStore, run_id: str) -> Plan | None:
    data = store.get(run_key(run_id, PLAN_FILE))
    return None if data is None else Plan.from_json(data)


def contradictions(
    plan: Plan,
    *,
    paths: Sequence[str],
    table: str | None,
    into: str,
    workers: int | None,
    commit_every: int | None,
    mode: str = "append",
) -> list[str]:
    """How the arguments of a rerun differ from the stored plan (empty: they agree)."""
    out: list[str] = []
    planned = [f.path for f in plan.files]
    if list(paths) != planned:
        out.append(f"inputs {list(paths)} != planned {planned}")
    if table != plan.table:
        out.append(f"table {table!r} != planned {plan.table!r}")
    if into != plan.into:
        out.append(f"into {into!r} != planned {plan.into!r}")
    if workers is not None and workers != plan.workers:
        out.append(f"workers {workers} != planned {plan.workers}")
    if commit_every is not None and commit_every != plan.commit_every:
        out.append(f"commit_every {commit_every} != planned {plan.commit_every}")
    if mode != plan.mode:
        out.append(f"mode {mode!r} != planned {plan.mode!r}")
    return out
