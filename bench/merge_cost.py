"""Merge-cost benchmark: a few-row branch merge at 10k / 100k / 1M rows, against doltlite.

    .venv/bin/python bench/merge_cost.py                          # 10k, 100k, 1M (minutes)
    .venv/bin/python bench/merge_cost.py --sizes 10000,100000
    .venv/bin/python bench/merge_cost.py --quick                  # 2k, 20k: seconds

Shape: a node table `Item` and an edge table `Link` (a chain, k_i -> k_i+1, N-1 edges),
bulk-loaded on main. Branch `dev` inserts, updates and deletes (cascade) one node each;
main does a different insert, update and delete; then dev merges into main, once with
lineage discovery ("on") and once, on a copy of the same graph, with the memory-bounded
ordered walk ("off"). Variants: scalar or with `emb: Vector(128)`; with or without
constraints (`@unique` on `tag`, `@card(0..3)` on `Link`).

Every merge runs in a fresh process (its own copy of the prepared graph), so the peak
RSS reported (`ru_maxrss` of that process) is the merge's own, next to the same
process's RSS before the merge (imports + open). Times are the median over several
merges of identical copies (`--lineage-runs` 5 for lineage and doltlite, `--runs` 3 for
the walk); each copy is flushed (`os.sync`) before its merge starts. doltlite
(`pip install doltlite`, not a dependency of graphlake) runs the same shape, each merge
in its own process too.

Targets, as ratios from one run:
  * lineage merge time at the largest size <= 1.5x the smallest, with and without
    constraints;
  * constrained merge at the largest size >= 10x faster than doltlite's constrained merge;
  * walk fallback at the largest size with Vector(128): peak RSS <= 600 MB and
    <= 1.3x the figure one size down.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as pkg_version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import median, render_table  # noqa: E402

SCHEMAS = {
    # (vector, constrained) -> schema text
    (False, False): "node Item { key: String @key  n: I64  tag: String? }\n"
    "edge Link: Item -> Item\n",
    (False, True): "node Item { key: String @key  n: I64  tag: String? @unique }\n"
    "edge Link: Item -> Item @card(0..3)\n",
    (True, False): "node Item { key: String @key  n: I64  tag: String?  emb: Vector(128)? }\n"
    "edge Link: Item -> Item\n",
    (True, True): "node Item { key: String @key  n: I64  tag: String? @unique  "
    "emb: Vector(128)? }\nedge Link: Item -> Item @card(0..3)\n",
}
VARIANTS = {  # name -> (vector, constrained)
    "scalar": (False, False),
    "scalar+cons": (False, True),
    "vec128": (True, False),
    "vec128+cons": (True, True),
}
QUICK_SIZES = (2_000, 20_000)
QUICK_VARIANTS = ("scalar+cons", "vec128")
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
LINEAGE_TARGET = 1.5  # lineage merge time, largest / smallest size
DOLT_TARGET = 10.0  # doltlite constrained merge time / graphlake constrained merge time
RSS_TARGET_MB = 600.0  # walk fallback peak RSS, largest size, Vector(128)
RSS_GROWTH_TARGET = 1.3  # ... and largest / one size down
HEADER = (
    "system",
    "rows",
    "variant",
    "discovery",
    "merge ms",
    "runs",
    "Item route/disc",
    "Link route/disc",
    "rows read d/l/s",
    "RSS base MB",
    "RSS peak MB",
    "check",
)


# --- the changes (the same rows in doltlite: see _doltlite.changes) ---------------------


def key(i: int) -> str:
    return f"k{i:07d}"


def changes(n: int) -> dict[str, dict[str, object]]:
    return {
        "dev": {
            "insert": "new-dev",
            "update": key(n // 3),
            "delete": key(n // 2),
            "value": -1,
            "tag": "nd",
        },
        "main": {
            "insert": "new-main",
            "update": key(n // 4),
            "delete": key((2 * n) // 3),
            "value": -2,
            "tag": "nm",
        },
    }


# --- children: build a prepared graph; run one merge -------------------------------------


def prepared_dir(work: Path, variant: str, n: int) -> Path:
    return work / f"gl-{variant}-{n}"


def child_build_all(n: int, work: str, variants: list[str]) -> None:
    """Build every variant's prepared graph at size `n` (one process: imports once);
    print one JSON line of load timings per variant."""
    out = {}
    for variant in variants:
        folder = prepared_dir(Path(work), variant, n)
        shutil.rmtree(folder, ignore_errors=True)
        out[variant] = child_build(variant, n, str(folder))
    print(json.dumps(out))


def child_build(variant: str, n: int, folder: str) -> dict[str, float]:
    """Init, bulk-load, branch and make both sides' changes."""
    import numpy as np
    import pyarrow as pa

    import graphlake as gl

    vector, constrained = VARIANTS[variant]
    g = gl.Graph.init(folder, SCHEMAS[(vector, constrained)])
    rng = np.random.default_rng(n)
    keys = pa.array([key(i) for i in range(n)], type=pa.string())
    cols = {
        "key": keys,
        "n": pa.array(np.arange(n, dtype=np.int64)),
        "tag": pa.array([f"t{i}" for i in range(n)], type=pa.string()),
    }
    if vector:
        flat = pa.array(rng.random(n * 128, dtype=np.float32))
        cols["emb"] = pa.FixedSizeListArray.from_arrays(flat, 128)
    items = pa.table(cols)
    del cols
    t0 = time.perf_counter()
    g.load(items, table="Item")
    t1 = time.perf_counter()
    del items
    links = pa.table(
        {
            "id": pa.array([f"e{i:07d}" for i in range(n - 1)], type=pa.string()),
            "src": keys.slice(0, n - 1),
            "dst": keys.slice(1),
        }
    )
    g.load(links, table="Link")
    t2 = time.perf_counter()
    g.create_branch("dev")
    for branch, spec in changes(n).items():
        row = {"key": spec["insert"], "n": 1, "tag": spec["tag"]}
        if vector:
            row["emb"] = rng.random(128, dtype=np.float32).tolist()
        with g.write(branch, message=f"{branch}: one insert, update, delete") as w:
            w.insert("Item", [row])
            w.update("Item", [{"key": spec["update"], "n": spec["value"]}])
            w.delete("Item", [spec["delete"]], cascade=True)
    t3 = time.perf_counter()
    return {"load_items_s": t1 - t0, "load_links_s": t2 - t1, "side_writes_s": t3 - t2}


def child_merge(folder: str, lineage: str, budget: int, n: int, profile: str) -> None:
    """One merge of dev into main, in this fresh process; print one JSON line."""
    import graphlake as gl
    from graphlake import probes
    from graphlake.errors import MergeMemoryError

    g = gl.Graph.open(folder)
    g.head("main"), g.head("dev")  # catalog reads: not part of the merge either way
    base_rss = maxrss_mb()
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    with probes.collect() as counts:
        t0 = time.perf_counter()
        try:
            result = g.merge("dev", into="main", lineage=lineage, memory_budget=budget)
        except MergeMemoryError as exc:  # a refusal is a result too (never a partial merge)
            print(
                json.dumps(
                    {
                        "seconds": time.perf_counter() - t0,
                        "rss_base_mb": base_rss,
                        "rss_peak_mb": maxrss_mb(),
                        "probes": dict(counts),
                        "error": f"refused: {type(exc).__name__}",
                    }
                )
            )
            return
        seconds = time.perf_counter() - t0
    if prof is not None:
        prof.disable()
        prof.dump_stats(profile)
    peak = maxrss_mb()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "rss_base_mb": base_rss,
                "rss_peak_mb": peak,
                "probes": dict(counts),
                "outcome": result.outcome,
                "stats": {k: v.to_dict() for k, v in result.stats.items()},
                "timings": result.timings,
                "check": verify(g, n),
            }
        )
    )


def verify(g, n: int) -> str:
    """Read back what the merge should have produced (after the measurement)."""
    spec = changes(n)
    problems = []
    for side in spec.values():
        row = g.get("Item", side["update"])
        if row is None or row["n"] != side["value"]:
            problems.append(f"update {side['update']} lost")
        if g.get("Item", side["insert"]) is None:
            problems.append(f"insert {side['insert']} missing")
        if g.get("Item", side["delete"]) is not None:
            problems.append(f"delete {side['delete']} undone")
        d = int(str(side["delete"])[1:])
        for e in (f"e{d - 1:07d}", f"e{d:07d}"):
            if g.get("Link", e) is not None:
                problems.append(f"edge {e} not cascaded")
    return "; ".join(problems) or "ok"


def maxrss_mb() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * 1024 / 1e6 if sys.platform != "darwin" else kib / 1e6


# --- the parent ------------------------------------------------------------------------


@dataclass
class Measure:
    system: str
    rows: int
    variant: str
    discovery: str  # "on" / "off" for graphlake, "-" for doltlite
    runs: list[dict] = field(default_factory=list)
    note: str = ""

    @property
    def ok_runs(self) -> list[dict]:
        return [r for r in self.runs if "error" not in r]

    @property
    def seconds(self) -> float:
        runs = self.ok_runs
        return median([r["seconds"] for r in runs]) if runs else float("nan")

    @property
    def peak_mb(self) -> float:
        return max((r["rss_peak_mb"] for r in self.runs), default=float("nan"))

    @property
    def base_mb(self) -> float:
        return max((r["rss_base_mb"] for r in self.runs), default=float("nan"))


def run_child(args: list[str], what: str, script: Path = Path(__file__)) -> dict:
    proc = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"{what} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def settle() -> None:
    """Flush the copy just written, so its writeback does not land inside the merge."""
    if hasattr(os, "sync"):
        os.sync()


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_graphlake(n: int, variants: list[str], work: Path) -> None:
    say(f"graphlake {human(n)}: building {', '.join(variants)}")
    built = run_child(["--_child-build", str(n), str(work), *variants], f"build {n}")
    settle()
    for v, b in built.items():
        say(f"  {v}: Item {b['load_items_s']:.1f} s, Link {b['load_links_s']:.1f} s")


def bench_graphlake(n: int, variant: str, work: Path, args: argparse.Namespace) -> list[Measure]:
    prepared = prepared_dir(work, variant, n)
    say(f"graphlake {variant} {human(n)}: merging")
    out = []
    for lineage in ("on", "off"):
        m = Measure("graphlake", n, variant, lineage)
        for i in range(args.lineage_runs if lineage == "on" else args.runs):
            copy = work / f"run-{variant}-{n}-{lineage}-{i}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(prepared, copy)
            settle()
            prof = ""
            if args.profile:
                prof = str(args.profile_dir / f"{variant}-{n}-{lineage}-{i}.prof")
            try:
                r = run_child(
                    ["--_child-merge", str(copy), lineage, str(args.memory_budget), str(n), prof],
                    f"merge {variant} {n} lineage={lineage}",
                )
            finally:
                shutil.rmtree(copy, ignore_errors=True)
            m.runs.append(r)
            say(
                f"  lineage={lineage} run {i + 1}: {r['seconds'] * 1e3:.1f} ms, "
                f"peak {r['rss_peak_mb']:.0f} MB, {r.get('error') or r['check']}"
            )
        out.append(m)
    shutil.rmtree(prepared, ignore_errors=True)
    return out


def bench_doltlite(n: int, constrained: bool, work: Path, args: argparse.Namespace) -> Measure:
    variant = "scalar+cons" if constrained else "scalar"
    m = Measure("doltlite", n, variant, "-")
    script = HERE / "_doltlite.py"
    prepared = work / f"dl-{variant}-{n}"
    shutil.rmtree(prepared, ignore_errors=True)
    say(f"doltlite {variant} {human(n)}: building")
    built = run_child(
        ["build", str(n), "1" if constrained else "0", str(prepared)],
        f"doltlite build {variant} {n}",
        script,
    )
    m.note = f"load {built['load_s']:.1f} s"
    settle()
    for i in range(args.lineage_runs):
        copy = work / f"dlrun-{variant}-{n}-{i}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(prepared, copy)
        settle()
        try:
            r = run_child(
                ["merge", str(copy), "1" if constrained else "0", str(n)],
                f"doltlite merge {variant} {n}",
                script,
            )
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        m.runs.append(r)
        say(f"  run {i + 1}: {r['seconds'] * 1e3:.1f} ms, {r['check']}")
    shutil.rmtree(prepared, ignore_errors=True)
    return m


# --- report ----------------------------------------------------------------------------


def human(n: int) -> str:
    if n >= 1_000_000 and n % 100_000 == 0:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000 and n % 100 == 0:
        return f"{n / 1_000:g}k"
    return f"{n:,}"


def _route(stats: dict | None) -> str:
    if stats is None:
        return "-"
    s = f"{stats['route']}/{stats['discovery']}"
    return f"{s}({stats['fallback']})" if stats.get("fallback") else s


def measure_row(m: Measure) -> list[str]:
    if m.note.startswith("not run"):
        return [
            m.system,
            human(m.rows),
            m.variant,
            m.discovery,
            "-",
            "0",
            "-",
            "-",
            "-",
            "-",
            "-",
            m.note,
        ]
    checks = sorted({r.get("error") or r["check"] for r in m.runs})
    if not m.ok_runs:
        return [
            m.system,
            human(m.rows),
            m.variant,
            m.discovery,
            "-",
            str(len(m.runs)),
            "-",
            "-",
            "-",
            f"{m.base_mb:,.0f}",
            f"{m.peak_mb:,.0f}",
            "; ".join(checks),
        ]
    last = m.ok_runs[-1]
    if m.system == "graphlake":
        st = last["stats"]
        p = last["probes"]
        read = (
            f"{p.get('discovery_rows', 0):,}/{p.get('lookup_rows', 0):,}/{p.get('lookup_scans', 0)}"
        )
        disc = "lineage" if m.discovery == "on" else "walk"
        item, link = _route(st.get("Item")), _route(st.get("Link"))
    else:
        disc, item, link, read = "dolt_merge", "-", "-", "-"
    check = "; ".join(checks)
    if m.note:
        check = f"{check} ({m.note})"
    return [
        m.system,
        human(m.rows),
        m.variant,
        disc,
        f"{m.seconds * 1e3:,.1f}",
        str(len(m.runs)),
        item,
        link,
        read,
        f"{m.base_mb:,.0f}",
        f"{m.peak_mb:,.0f}",
        check,
    ]


PHASES = ("resolve_base", "discover", "classify", "validate", "publish")


def phases_of(measures: list[Measure]) -> list[str]:
    """The phases `MergeResult.timings` reported, the known ones first."""
    seen = [p for p in PHASES]
    for m in measures:
        for r in m.runs:
            seen += [k for k in r.get("timings", {}) if k not in seen]
    return seen


def median_run(m: Measure) -> dict:
    """The run whose time is the median (the lower one of an even count)."""
    ordered = sorted(m.ok_runs, key=lambda r: r["seconds"])
    return ordered[(len(ordered) - 1) // 2]


def phase_rows(measures: list[Measure], phases: list[str]) -> list[list[str]]:
    rows = []
    for m in measures:
        if m.system != "graphlake" or not m.ok_runs:
            continue
        run = median_run(m)
        ms = {ph: run["timings"].get(ph, 0.0) * 1e3 for ph in phases}
        total = run["seconds"] * 1e3
        top = max(phases, key=lambda ph: ms[ph])
        rows.append(
            [
                f"{human(m.rows)} {m.variant} {'lineage' if m.discovery == 'on' else 'walk'}",
                f"{total:,.1f}",
                *(f"{ms[ph]:,.1f}" for ph in phases),
                f"{top} {ms[top] / total:.0%}" if total > 0 else "-",
            ]
        )
    return rows


def find(measures: list[Measure], system: str, n: int, variant: str, disc: str) -> Measure | None:
    for m in measures:
        if (m.system, m.rows, m.variant, m.discovery) == (system, n, variant, disc) and m.ok_runs:
            return m
    return None


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def target_rows(measures: list[Measure], sizes: list[int], variants: list[str]) -> list[list[str]]:
    rows: list[list[str]] = []
    small, big = sizes[0], sizes[-1]
    for v in variants:
        a = find(measures, "graphlake", small, v, "on")
        b = find(measures, "graphlake", big, v, "on")
        label = f"lineage merge {human(big)} / {human(small)}, {v}"
        if a is None or b is None or big == small:
            rows.append([label, "n/a", f"<= {LINEAGE_TARGET}x", "n/a"])
            continue
        ratio = b.seconds / a.seconds
        rows.append(
            [
                label,
                f"{b.seconds * 1e3:.0f} / {a.seconds * 1e3:.0f} ms = {ratio:.2f}x",
                f"<= {LINEAGE_TARGET}x",
                verdict(ratio <= LINEAGE_TARGET),
            ]
        )
    g = find(measures, "graphlake", big, "scalar+cons", "on")
    d = find(measures, "doltlite", big, "scalar+cons", "-")
    label = f"constrained merge {human(big)}: doltlite / graphlake"
    if g is None or d is None:
        why = "doltlite not run" if d is None else "graphlake scalar+cons not run"
        rows.append([label, f"n/a ({why})", f">= {DOLT_TARGET:g}x", "n/a"])
    else:
        ratio = d.seconds / g.seconds
        rows.append(
            [
                label,
                f"{d.seconds * 1e3:,.0f} / {g.seconds * 1e3:,.0f} ms = {ratio:.1f}x",
                f">= {DOLT_TARGET:g}x",
                verdict(ratio >= DOLT_TARGET),
            ]
        )
    for v in (v for v in variants if VARIANTS[v][0]):
        b = find(measures, "graphlake", big, v, "off")
        label = f"walk fallback {human(big)}, {v}: peak RSS"
        if b is None:
            rows.append([label, "n/a", f"<= {RSS_TARGET_MB:g} MB", "n/a"])
            continue
        rows.append(
            [
                label,
                f"{b.peak_mb:,.0f} MB (base {b.base_mb:,.0f})",
                f"<= {RSS_TARGET_MB:g} MB",
                verdict(b.peak_mb <= RSS_TARGET_MB),
            ]
        )
        if len(sizes) < 2:
            continue
        prev = sizes[-2]
        a = find(measures, "graphlake", prev, v, "off")
        label = f"walk fallback peak RSS {human(big)} / {human(prev)}, {v}"
        if a is None:
            rows.append([label, "n/a", f"<= {RSS_GROWTH_TARGET}x", "n/a"])
            continue
        ratio = b.peak_mb / a.peak_mb
        rows.append(
            [
                label,
                f"{b.peak_mb:,.0f} / {a.peak_mb:,.0f} MB = {ratio:.2f}x",
                f"<= {RSS_GROWTH_TARGET}x",
                verdict(ratio <= RSS_GROWTH_TARGET),
            ]
        )
    return rows


def machine_line() -> str:
    def v(name: str) -> str:
        try:
            return pkg_version(name)
        except PackageNotFoundError:
            return "not installed"

    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        ram = float("nan")
    return (
        f"{os.cpu_count()} cores, {ram:.1f} GiB RAM, {platform.system()} "
        f"{platform.machine()}, Python {platform.python_version()}, "
        f"pylance {v('pylance')}, duckdb {v('duckdb')}, pyarrow {v('pyarrow')}, "
        f"doltlite {v('doltlite')}"
    )


def loadavg() -> str:
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def parse_sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        mult = 1
        if part.endswith("k"):
            part, mult = part[:-1], 1_000
        elif part.endswith("m"):
            part, mult = part[:-1], 1_000_000
        out.append(int(float(part) * mult))
    return sorted(set(out))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--sizes",
        default=None,
        help="rows per table, comma separated (default 10000,100000,1000000)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="sizes 2000,20000, variants scalar+cons and vec128, one run each",
    )
    p.add_argument(
        "--variants",
        default=None,
        help=f"comma separated, of: {', '.join(VARIANTS)} (default: all)",
    )
    p.add_argument("--runs", type=int, default=None, help="walk merges per figure (3; quick 1)")
    p.add_argument(
        "--lineage-runs",
        type=int,
        default=None,
        help="lineage and doltlite merges per figure (5; quick 1)",
    )
    p.add_argument(
        "--memory-budget",
        type=int,
        default=256 * 2**20,
        help="memory_budget of the merges, bytes (256 MiB)",
    )
    p.add_argument("--no-doltlite", action="store_true", help="skip doltlite")
    p.add_argument(
        "--doltlite-max",
        type=int,
        default=1_000_000,
        help="largest size doltlite is loaded at (bulk load is slow)",
    )
    p.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="write a cProfile file per graphlake merge into DIR",
    )
    p.add_argument("--workdir", type=Path, default=None, help="scratch folder (temp dir)")
    p.add_argument("--_child-build", nargs="+", help=argparse.SUPPRESS)
    p.add_argument("--_child-merge", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._child_build:
        n, folder, *names = args._child_build
        child_build_all(int(n), folder, names)
        return 0
    if args._child_merge:
        folder, lineage, budget, n, prof = args._child_merge
        child_merge(folder, lineage, int(budget), int(n), prof)
        return 0

    sizes = (
        parse_sizes(args.sizes)
        if args.sizes
        else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    )
    variants = (
        args.variants.split(",")
        if args.variants
        else list(QUICK_VARIANTS if args.quick else VARIANTS)
    )
    for v in variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r}")
    args.runs = args.runs or (1 if args.quick else 3)
    args.lineage_runs = args.lineage_runs or (1 if args.quick else 5)
    args.profile_dir = args.profile
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    have_dolt = importlib.util.find_spec("doltlite") is not None
    run_dolt = have_dolt and not args.no_doltlite

    work = args.workdir or Path(tempfile.mkdtemp(prefix="graphlake-merge-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    measures: list[Measure] = []
    load_start = loadavg()
    started = time.perf_counter()
    try:
        for n in sizes:
            build_graphlake(n, variants, work)
            for v in variants:
                measures += bench_graphlake(n, v, work, args)
            for constrained in (False, True):
                variant = "scalar+cons" if constrained else "scalar"
                if not run_dolt:
                    why = (
                        "not run: doltlite not installed (.venv/bin/pip install doltlite)"
                        if not have_dolt
                        else "not run: --no-doltlite"
                    )
                    measures.append(Measure("doltlite", n, variant, "-", note=why))
                elif n > args.doltlite_max:
                    measures.append(
                        Measure(
                            "doltlite",
                            n,
                            variant,
                            "-",
                            note=f"not run: above --doltlite-max {args.doltlite_max:,}",
                        )
                    )
                else:
                    measures.append(bench_doltlite(n, constrained, work, args))
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.perf_counter() - started

    lines = [
        "graphlake merge-cost benchmark",
        f"machine: {machine_line()}",
        f"load average (1/5/15 min): {load_start} at the start, {loadavg()} at the end "
        f"(anything else running on the machine inflates the times)",
        f"run: sizes {','.join(map(str, sizes))}, variants {','.join(variants)}, "
        f"{args.lineage_runs} lineage/doltlite and {args.runs} walk merge(s) per figure "
        f"(median time, max RSS), memory_budget "
        f"{args.memory_budget // 2**20} MiB, {elapsed:.0f} s in all",
        "each merge: dev (1 insert, 1 update, 1 cascade delete) into main (a different "
        "1/1/1), one fresh process per merge",
        "",
        render_table(HEADER, [measure_row(m) for m in measures]),
        "",
        "rows read d/l/s = probes discovery_rows / lookup_rows / lookup_scans; "
        "RSS = ru_maxrss in MB (10^6 B) before / at the end of the merge",
        "",
        "where the time goes (graphlake: MergeResult.timings of the median run, ms)",
        render_table(
            ("merge", "total", *phases_of(measures), "largest"),
            phase_rows(measures, phases_of(measures)),
        ),
        "",
        "targets (ratios from this run)",
        render_table(
            ("check", "measured", "target", "verdict"), target_rows(measures, sizes, variants)
        ),
    ]
    if not have_dolt:
        lines += ["", "doltlite not installed: .venv/bin/pip install doltlite"]
    print("\n".join(lines))
    bad = [m for m in measures for r in m.ok_runs if r["check"] != "ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
