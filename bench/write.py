"""Write-path benchmark: bulk Parquet load and one-row commit latency, in one run.

    .venv/bin/python bench/write.py                 # 1M rows, 30 commits per kind
    .venv/bin/python bench/write.py --quick         # 100k rows, 10 commits: seconds
    .venv/bin/python bench/write.py --rows 300000

Targets (compared as ratios, side by side in one run, because a small machine is noisy):
  * bulk load of `--rows` Person rows from Parquet: >= 300k rows/s;
  * one-row commit (update of an existing row, insert of a new one) on the big table
    costs at most 1.5x the same commit on a 10k-row table (O(1) in table size).

Each load runs in its own subprocess so its peak RSS (ru_maxrss) is the load's own.
Commit latencies are measured in this process, alternating between the two graphs so
that machine noise hits both sizes alike.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import (
    cpu_seconds,
    current_rss_mib,
    load_average,
    machine,
    median,
    peak_rss_mib,
    percentile,
    render_table,
)

SCHEMA = """
node Person {
  name: String @key
  age: I32 @range(0..150)
  email: String? @unique @check("[^@]+@[^@]+")
  score: F64?
}
"""
SMALL_ROWS = 10_000
BULK_TARGET = 300_000  # rows/s
RATIO_TARGET = 1.5  # one-row commit latency, big table / small table
HEADER = ("figure", "value", "target", "verdict")


# --- data -------------------------------------------------------------------------------


def make_parquet(path: Path, n: int, seed: int = 7) -> None:
    """`n` Person rows in random key order; every 10th email is null."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    names = pa.array([f"p{i:09d}" for i in order.tolist()], type=pa.string())
    emails = pa.array(
        [None if i % 10 == 0 else f"user{i}@example.org" for i in order.tolist()],
        type=pa.string(),
    )
    table = pa.table(
        {
            "name": names,
            "age": pa.array(rng.integers(0, 100, n, dtype=np.int32)),
            "email": emails,
            "score": pa.array(rng.random(n)),
        }
    )
    pq.write_table(table, path)


def human(n: int) -> str:
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000 and n % 100 == 0:
        return f"{n / 1_000:g}k"
    return f"{n:,}"


# --- the load, in a subprocess ----------------------------------------------------------


def child_load(parquet: str, graph_dir: str) -> None:
    """Init a fresh graph and load `parquet` into Person; print one JSON line of figures."""
    import graphlake as gl

    g = gl.Graph.init(graph_dir, SCHEMA)
    before_peak, before_cur = peak_rss_mib(), current_rss_mib()
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    g.load(parquet, table="Person")
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    peak = peak_rss_mib()
    ds = g.snapshot().dataset("Person")
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "rows": ds.count_rows(),
                "peak_rss_mib": peak,
                "rss_before_mib": max(before_peak, before_cur),
                "fragments": len(ds.get_fragments()),
            }
        )
    )


def run_load(parquet: Path, graph_dir: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--_child-load", str(parquet), str(graph_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"load of {parquet} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- one-row commits --------------------------------------------------------------------


class CommitBench:
    """One-row updates and inserts against one loaded graph, timed one commit each."""

    def __init__(self, label: str, graph_dir: Path, n_rows: int, seed: int):
        import graphlake as gl

        self.label = label
        self.graph = gl.Graph.open(graph_dir)
        self.n_rows = n_rows
        rng = random.Random(seed)
        # Distinct existing keys (`make_parquet` names row i `p{i:09d}`).
        self._update_keys = iter(rng.sample(range(n_rows), min(n_rows, 10_000)))
        self._serial = 0
        self.update_ms: list[float] = []
        self.insert_ms: list[float] = []

    def update(self, record: bool) -> None:
        i = next(self._update_keys)
        self._serial += 1
        # Ages in the data are 0..99: 100.. always changes the row (never a no-op).
        row = {"name": f"p{i:09d}", "age": 100 + self._serial % 50}
        t0 = time.perf_counter()
        with self.graph.write(message="bench update") as w:
            w.update("Person", row)
        if record:
            self.update_ms.append((time.perf_counter() - t0) * 1e3)

    def insert(self, record: bool) -> None:
        self._serial += 1
        row = {
            "name": f"new{self._serial:09d}",
            "age": 42,
            "email": f"new{self._serial}@bench.org",
            "score": 0.5,
        }
        t0 = time.perf_counter()
        with self.graph.write(message="bench insert") as w:
            w.insert("Person", [row])
        if record:
            self.insert_ms.append((time.perf_counter() - t0) * 1e3)

    def fragments(self) -> int:
        return len(self.graph.snapshot().dataset("Person").get_fragments())


def run_commits(benches: list[CommitBench], warmup: int, commits: int) -> None:
    for i in range(warmup + commits):
        record = i >= warmup
        for b in benches:  # alternate sizes: noise hits both alike
            b.update(record)
            b.insert(record)


# --- report -----------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(
    args: argparse.Namespace,
    loads: dict[str, dict],
    small: CommitBench,
    big: CommitBench,
    small_frags: int,
    big_frags: int,
) -> str:
    big_runs = loads["big"]
    rates = [r["rows"] / r["seconds"] for r in big_runs]
    rate = median(rates)
    rss = max(r["peak_rss_mib"] for r in big_runs)
    rss_delta = max(r["peak_rss_mib"] - r["rss_before_mib"] for r in big_runs)
    small_load = loads["small"][0]
    s, b = human(small.n_rows), human(big.n_rows)
    runs = f"median of {len(rates)}" if len(rates) > 1 else "1 run"
    rows: list[tuple[str, str, str, str]] = [
        (
            f"bulk load {b} rows (Parquet), {runs}",
            f"{rate:,.0f} rows/s",
            f">= {BULK_TARGET:,} rows/s",
            f"{rate / BULK_TARGET:.2f}x {verdict(rate >= BULK_TARGET)}",
        ),
        ("  each run", " / ".join(f"{x / 1000:,.0f}k" for x in rates), "", ""),
        ("  load wall time (median)", f"{median([r['seconds'] for r in big_runs]):.2f} s", "", ""),
        (
            "  load CPU time, all threads (median)",
            f"{median([r['cpu_seconds'] for r in big_runs]):.2f} s",
            "",
            "",
        ),
        ("  peak RSS of the load process", f"{rss:,.0f} MiB", "", ""),
        ("  ... of which the load added", f"{rss_delta:,.0f} MiB", "", ""),
        (
            f"bulk load {s} rows (Parquet)",
            f"{small_load['rows'] / small_load['seconds']:,.0f} rows/s",
            "",
            "",
        ),
    ]
    ratios = []
    for kind in ("update", "insert"):
        lat = {}
        for bench in (small, big):
            ms = getattr(bench, f"{kind}_ms")
            lat[bench.label] = median(ms)
            rows.append(
                (
                    f"one-row {kind}, {human(bench.n_rows)} rows: median / p90",
                    f"{median(ms):.1f} / {percentile(ms, 90):.1f} ms",
                    "",
                    "",
                )
            )
        ratio = lat["big"] / lat["small"]
        ratios.append((kind, ratio))
    for kind, ratio in ratios:
        rows.append(
            (
                f"one-row {kind} latency {b} / {s} (median)",
                f"{ratio:.2f}x",
                f"<= {RATIO_TARGET}x",
                verdict(ratio <= RATIO_TARGET),
            )
        )
    rows.append(
        ("fragments after the commits (small / big)", f"{small_frags} / {big_frags}", "", "")
    )
    lines = [
        "graphlake write benchmark",
        f"machine: {machine()}",
        f"load average (1 min) at start / end: {args.load_start} / {load_average()} "
        "(other processes compete for the cores: compare figures within one run)",
        f"run: --rows {args.rows}{' --quick' if args.quick else ''}, {args.load_runs} bulk "
        f"load(s), {args.commits} timed commits per kind and size after {args.warmup} warm-ups",
        "",
        render_table(HEADER, rows),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=None, help="rows of the big table (1M)")
    p.add_argument("--quick", action="store_true", help="100k rows, 10 commits: a smoke run")
    p.add_argument("--commits", type=int, default=None, help="timed commits per kind (30)")
    p.add_argument("--warmup", type=int, default=None, help="untimed commits first (3)")
    p.add_argument(
        "--load-runs",
        type=int,
        default=None,
        help="bulk loads to take the median of (3; --quick: 1)",
    )
    p.add_argument("--workdir", type=Path, default=None, help="keep data here (temp dir)")
    p.add_argument("--_child-load", nargs=2, metavar=("PARQUET", "GRAPH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._child_load:
        child_load(*args._child_load)
        return 0
    args.rows = args.rows or (100_000 if args.quick else 1_000_000)
    args.commits = args.commits or (10 if args.quick else 30)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 3)
    args.load_runs = max(1, args.load_runs or (1 if args.quick else 3))
    small_rows = min(SMALL_ROWS, args.rows)

    args.load_start = load_average()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="graphlake-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"generating {args.rows:,} rows in {work} ...", file=sys.stderr, flush=True)
        big_pq, small_pq = work / "people.parquet", work / "people-small.parquet"
        make_parquet(big_pq, args.rows)
        make_parquet(small_pq, small_rows)
        for d in ("g-big", "g-small"):
            shutil.rmtree(work / d, ignore_errors=True)
        print("loading ...", file=sys.stderr, flush=True)
        runs = []
        for i in range(args.load_runs):  # the first run's graph serves the commits below
            d = work / ("g-big" if i == 0 else f"g-big-{i}")
            runs.append(run_load(big_pq, d))
            if i:
                shutil.rmtree(d, ignore_errors=True)
        loads = {"big": runs, "small": [run_load(small_pq, work / "g-small")]}
        print("one-row commits ...", file=sys.stderr, flush=True)
        small = CommitBench("small", work / "g-small", small_rows, seed=1)
        big = CommitBench("big", work / "g-big", args.rows, seed=2)
        run_commits([small, big], args.warmup, args.commits)
        print(report(args, loads, small, big, small.fragments(), big.fragments()))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
