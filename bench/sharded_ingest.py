"""Sharded-ingest benchmark: parallel workers end to end, and merge_many of N shards.

    .venv/bin/python bench/sharded_ingest.py            # 1M rows; 1, 2, 4 workers; 8, 64 shards
    .venv/bin/python bench/sharded_ingest.py --repeat 3 --shards ""   # ingest only, 3 rounds
    .venv/bin/python bench/sharded_ingest.py --quick    # 50k rows; 1, 2 workers; 8 shards

Rows are (key, text, emb: Vector(32)) in one Parquet file (row groups of 64k rows).

* ingest: `graphlake.ingestion.ingest(..., engine="process")` on a fresh graph per worker
  count, timed end to end (plan, spawning workers, their commits, the merge, cleanup).
  `--repeat N` runs the worker counts in turn N times (1, 2, 4, 1, 2, 4, ...) and reports
  medians, and the speed-up as the median of each round's ratio: on a shared machine,
  runs side by side see about the same load. Each run also reports the 1-minute load
  average when it started and the cores it kept busy (CPU seconds of the orchestrator
  and its worker processes / wall seconds). `ingest` returns once the data is in `main`;
  worker processes finish exiting after that, and the benchmark waits for them (untimed,
  but their CPU is counted) before the next run. Every run prints the CPU seconds of each
  of its processes: the orchestrator (this process) and each spawned one (workers, the
  multiprocessing resource tracker), sampled from /proc; the total is exact (getrusage).
* merge_many: N insert-only shard branches made with `g.load(table, branch=...)`
  (untimed), then one `merge_many(..., strict_disjoint=True)`, timed; "written" is the
  growth of all files under the graph root during the merge, "shard data" what the
  shard loads added.

Targets (reported PASS/MISS, from this one run):
  * merge_many of 64 insert-only shards <= 2 s, writing < 1% of the shard data;
  * 2 workers use <= 1.25x the CPU seconds of 1 worker (all processes of the run; the
    median over rounds of each round's ratio): what a second worker costs beyond its
    share of the work is its start-up. (This replaced "2 workers >= 1.4x the rows/s of
    1 worker", which a 2-core machine shared with other work cannot show; the wall-clock
    ratio is still printed.)
  * end-to-end ingest >= 200k rows/s (the best worker count).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import graphlake as gl  # noqa: E402  (light: Lance and DuckDB load on first use)
from _proc_cpu import ChildCpuSampler  # noqa: E402
from _util import machine, median, render_table  # noqa: E402

# numpy, pyarrow and the ingest orchestrator are imported inside the functions that use
# them: spawned workers run this file's top level again (as `__mp_main__`), and should
# pay for what a worker needs only, as under `graphlake ingest`.
if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA = "node Doc { key: String @key  text: String  emb: Vector(32) }"
DIM = 32
MERGE_SECONDS_TARGET = 2.0
MERGE_WRITTEN_TARGET = 0.01
CPU_RATIO_TARGET = 1.25
RATE_TARGET = 200_000


def make_rows(n: int, start: int = 0, seed: int = 7) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed + start)
    keys = pa.array([f"doc-{i:09d}" for i in range(start, start + n)])
    text = pa.array([f"lorem ipsum dolor sit amet {i}" for i in range(start, start + n)])
    emb = pa.FixedSizeListArray.from_arrays(pa.array(rng.random(n * DIM, dtype=np.float32)), DIM)
    return pa.table({"key": keys, "text": text, "emb": emb})


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


@dataclass
class IngestRun:
    workers: int
    seconds: float
    rows: int
    merge_seconds: float
    adopted: int
    load: float  # 1-minute load average at the start
    cpu_seconds: float  # orchestrator + worker processes
    processes: list[tuple[str, float]]  # (what, CPU seconds): orchestrator, then children

    @property
    def rate(self) -> float:
        return self.rows / self.seconds

    @property
    def cores(self) -> float:
        return self.cpu_seconds / self.seconds


def _reap_workers(timeout: float = 60.0) -> None:
    """Wait until the worker processes of the last run have exited."""
    deadline = time.monotonic() + timeout
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)


def _cpu_with_children() -> float:
    """CPU seconds of this process and of its finished child processes (the workers:
    the engine waits for them before `ingest` returns)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@dataclass
class MergeRun:
    shards: int
    rows_per_shard: int
    seconds: float
    written: int
    shard_bytes: int
    adopted: int
    error: str | None = None

    @property
    def written_share(self) -> float:
        return self.written / self.shard_bytes if self.shard_bytes else float("nan")


def bench_ingest(
    work: Path, parquet: Path, rows: int, workers: int, commit_every: int
) -> IngestRun:
    from graphlake.ingestion import ingest

    root = work / f"ingest-{workers}"
    shutil.rmtree(root, ignore_errors=True)
    g = gl.Graph.init(root, SCHEMA)
    load = os.getloadavg()[0]
    cpu0 = _cpu_with_children()
    self0 = _cpu_self()
    with ChildCpuSampler() as sampler:
        t0 = time.perf_counter()
        result = ingest(
            g, parquet, table="Doc", workers=workers, commit_every=commit_every, progress=False
        )
        seconds = time.perf_counter() - t0
        _reap_workers()  # their exit runs after `ingest` returns; not in the next run's time
    cpu = _cpu_with_children() - cpu0 - sampler.own_cpu_s
    orchestrator = _cpu_self() - self0 - sampler.own_cpu_s
    processes = [("orchestrator", orchestrator)] + [
        (f"{c.cmdline} {c.pid}", c.cpu_s) for c in sampler.children.values()
    ]
    assert result.rows == rows, (result.rows, rows)
    assert g.snapshot().dataset("Doc").count_rows() == rows
    merge = result.merge
    adopted = merge.stats["Doc"].adopted_rows if merge and "Doc" in merge.stats else 0
    shutil.rmtree(root, ignore_errors=True)
    return IngestRun(
        workers, seconds, rows, result.timings.get("merge", 0.0), adopted, load, cpu, processes
    )


def bench_merge(work: Path, data: pa.Table, shards: int) -> MergeRun:
    root = work / f"merge-{shards}"
    shutil.rmtree(root, ignore_errors=True)
    g = gl.Graph.init(root, SCHEMA)
    names = [f"shard/{i}" for i in range(shards)]
    per = data.num_rows // shards
    before_shards = tree_bytes(root)
    for i, name in enumerate(names):
        g.create_branch(name)
        g.load(data.slice(i * per, per), branch=name, table="Doc")
    shard_bytes = tree_bytes(root) - before_shards
    before = tree_bytes(root)
    t0 = time.perf_counter()
    try:
        result = g.merge_many(names, into="main", strict_disjoint=True)
    except gl.GraphLakeError as exc:  # reported in the table, not hidden
        seconds = time.perf_counter() - t0
        shutil.rmtree(root, ignore_errors=True)
        return MergeRun(
            shards, per, seconds, 0, shard_bytes, 0, error=f"{type(exc).__name__}: {exc}"
        )
    seconds = time.perf_counter() - t0
    written = tree_bytes(root) - before
    assert g.snapshot().dataset("Doc").count_rows() == per * shards
    shutil.rmtree(root, ignore_errors=True)
    return MergeRun(shards, per, seconds, written, shard_bytes, result.stats["Doc"].adopted_rows)


def _median_run(runs: list[IngestRun]) -> IngestRun:
    """The run of median wall time (the upper middle one for an even count)."""
    return sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    ap.add_argument("--shards", default="8,64", help="shard counts for merge_many")
    ap.add_argument("--commit-every", type=int, default=100_000)
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of the worker counts, run in turn (medians reported)",
    )
    ap.add_argument("--quick", action="store_true", help="50k rows, 1 and 2 workers, 8 shards")
    ap.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp dir)")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.workers, args.shards, args.commit_every = 50_000, "1,2", "8", 20_000
    worker_counts = [int(w) for w in args.workers.split(",") if w]
    shard_counts = [int(s) for s in args.shards.split(",") if s]

    work = Path(tempfile.mkdtemp(prefix="gl-sharded-", dir=args.dir))
    try:
        print(f"machine: {machine()}")
        import pyarrow.parquet as pq

        print(
            f"rows: {args.rows:,} (key, text, emb Vector({DIM})), commit_every "
            f"{args.commit_every:,}, process engine\n",
            flush=True,
        )
        data = make_rows(args.rows)
        parquet = work / "docs.parquet"
        pq.write_table(data, parquet, row_group_size=64 * 1024)

        rounds: list[dict[int, IngestRun]] = []
        for i in range(args.repeat if worker_counts else 0):
            runs = {}
            for w in worker_counts:
                runs[w] = r = bench_ingest(work, parquet, args.rows, w, args.commit_every)
                print(
                    f"  round {i + 1}: {w} worker(s) {r.seconds:.2f} s, merge "
                    f"{r.merge_seconds:.2f} s, {r.cores:.2f} cores busy, load {r.load:.2f}",
                    flush=True,
                )
                print(
                    "    CPU s: "
                    + ", ".join(f"{what} {cpu:.2f}" for what, cpu in r.processes)
                    + f"; total {r.cpu_seconds:.2f} (exact)",
                    flush=True,
                )
            rounds.append(runs)
        ingests = [_median_run([runs[w] for runs in rounds]) for w in worker_counts]
        # Each round's ratio to its own 1-worker run, then the median over rounds.
        speedup = {
            w: median([runs[1].seconds / runs[w].seconds for runs in rounds])
            for w in worker_counts
            if 1 in worker_counts
        }
        cpu_ratio = {
            w: median([runs[w].cpu_seconds / runs[1].cpu_seconds for runs in rounds])
            for w in worker_counts
            if 1 in worker_counts
        }
        rows = [
            [
                str(r.workers),
                f"{r.seconds:.2f}",
                f"{r.rate:,.0f}",
                f"{speedup[r.workers]:.2f}x" if speedup else "-",
                f"{r.cpu_seconds:.2f}",
                f"{cpu_ratio[r.workers]:.2f}x" if cpu_ratio else "-",
                f"{r.merge_seconds:.2f}",
                f"{r.cores:.2f}",
                f"{r.load:.2f}",
                f"{r.adopted:,}",
            ]
            for r in ingests
        ]
        print(
            "ingest, end to end" + (f" (median of {args.repeat} rounds)" if args.repeat > 1 else "")
        )
        print(
            render_table(
                [
                    "workers",
                    "seconds",
                    "rows/s",
                    "vs 1 worker",
                    "CPU s",
                    "CPU vs 1 worker",
                    "merge s",
                    "cores busy",
                    "load",
                    "adopted rows",
                ],
                rows,
            )
        )
        print(flush=True)
        one = next((r for r in ingests if r.workers == 1), None)

        merges = [bench_merge(work, data, n) for n in shard_counts]
        rows = [
            [
                str(m.shards),
                f"{m.rows_per_shard:,}",
                f"{m.seconds:.3f}",
                f"{m.written / 2**20:.2f}" if not m.error else "error",
                f"{m.shard_bytes / 2**20:.1f}",
                f"{m.written_share:.3%}" if not m.error else "-",
                f"{m.adopted:,}",
            ]
            for m in merges
        ]
        print("merge_many of insert-only shards (strict_disjoint)")
        print(
            render_table(
                [
                    "shards",
                    "rows/shard",
                    "merge s",
                    "written MiB",
                    "shard data MiB",
                    "written/shard",
                    "adopted rows",
                ],
                rows,
            )
        )
        for m in merges:
            if m.error:
                print(f"  {m.shards} shards failed after {m.seconds:.2f} s: {m.error}")
        print()

        m64 = next((m for m in merges if m.shards == 64), None)
        two = next((r for r in ingests if r.workers == 2), None)
        best = max(ingests, key=lambda r: r.rate, default=None)
        merge_ok = (
            None
            if m64 is None
            else (
                m64.error is None
                and m64.seconds <= MERGE_SECONDS_TARGET
                and m64.written_share < MERGE_WRITTEN_TARGET
            )
        )
        cpu_ok = None if one is None or two is None else cpu_ratio[2] <= CPU_RATIO_TARGET
        print(f"targets ({os.cpu_count()} cores)")
        print(
            f"  merge_many 64 shards <= {MERGE_SECONDS_TARGET:.0f} s, written < 1%: "
            f"{verdict(merge_ok)}"
            + (
                " (64 shards not measured)"
                if m64 is None
                else " (the merge failed)"
                if m64.error
                else f" ({m64.seconds:.2f} s, {m64.written_share:.3%})"
            )
        )
        print(
            f"  2 workers <= {CPU_RATIO_TARGET}x the CPU seconds of 1 worker: "
            f"{verdict(cpu_ok)}"
            + (
                f" ({cpu_ratio[2]:.2f}x; wall-clock speed-up {speedup[2]:.2f}x)"
                if one and two
                else ""
            )
        )
        print(
            f"  end-to-end ingest >= {RATE_TARGET:,} rows/s: "
            + (
                "n/a (not measured)"
                if best is None
                else f"{verdict(best.rate >= RATE_TARGET)} ({best.rate:,.0f} rows/s with "
                f"{best.workers} worker{'s' if best.workers > 1 else ''})"
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
