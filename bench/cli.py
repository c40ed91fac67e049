"""CLI start-up benchmark: whole `graphlake` processes, as a user runs them.

    .venv/bin/python bench/cli.py              # 7 runs of each command, medians
    .venv/bin/python bench/cli.py --runs 15 --demo demo-graph

Times `graphlake --help`, `--version`, `log` and `branch list` on the demo graph (built
once with `graphlake demo`, untimed, unless --demo names one), and how long after its
start `graphlake serve` answers `GET /health` (127.0.0.1, a free port). Each figure is the
median over --runs processes: wall seconds, and the CPU seconds (user + system) of that
one process, from `os.wait4`. On a busy machine wall time grows with the load while CPU
time stays close to what a quiet machine would show; both are printed, with the load.
The commands run with bytecode caching on (PYTHONDONTWRITEBYTECODE is dropped from their
environment), as on a user's machine: the untimed first run of each writes the .pyc
files, otherwise every run would compile graphlake's modules again (~0.1 CPU-s).

Targets (issue 14; wall-clock medians, meant for a quiet 2-core machine):
  --help, --version <= 0.3 s; log, branch list <= 1.0 s; serve answers /health <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import load_average, median, render_table  # noqa: E402

HEALTH_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Case:
    name: str
    target_s: float
    run: Callable[[], tuple[float, float]]  # -> (wall seconds, CPU seconds)


def graphlake_command() -> list[str]:
    """The installed `graphlake` script next to this Python, else `python -m`."""
    script = Path(sys.executable).parent / "graphlake"
    return [str(script)] if script.exists() else [sys.executable, "-m", "graphlake.cli.app"]


def _cpu_of(pid: int) -> tuple[int, float]:
    """Wait for child `pid`; its exit status and CPU seconds (user + system)."""
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


# As a user runs them: with .pyc files (see the module docstring).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(argv: list[str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    code, cpu = _cpu_of(proc.pid)
    wall = time.perf_counter() - t0
    proc.returncode = code  # reaped by wait4 above
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {proc.stderr.read().decode()}")
    return wall, cpu


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def serve_once(gl: list[str], root: Path) -> tuple[float, float]:
    """Seconds from starting `graphlake serve` to its first 200 on /health, and the
    server's CPU seconds until then (stopped with SIGTERM right after)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/health"
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*gl, "serve", str(root), "--port", str(port), "--no-auth", "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    try:
        while not _healthy(url):
            if proc.poll() is not None:
                raise SystemExit(f"graphlake serve exited with {proc.returncode}")
            if time.perf_counter() - t0 > HEALTH_TIMEOUT_S:
                raise SystemExit(f"no answer on {url} after {HEALTH_TIMEOUT_S:.0f} s")
            time.sleep(0.01)
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
    _, cpu = _cpu_of(proc.pid)
    proc.returncode = 0
    return wall, cpu


def demo_graph(gl: list[str], work: Path) -> Path:
    root = work / "demo-graph"
    subprocess.run(
        [*gl, "demo", str(root), "--fresh"],
        check=True,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return root


def cases(gl: list[str], root: Path) -> list[Case]:
    return [
        Case("graphlake --help", 0.3, lambda: run_once([*gl, "--help"])),
        Case("graphlake --version", 0.3, lambda: run_once([*gl, "--version"])),
        Case("graphlake log (demo)", 1.0, lambda: run_once([*gl, "log", str(root)])),
        Case(
            "graphlake branch list (demo)",
            1.0,
            lambda: run_once([*gl, "branch", "list", str(root)]),
        ),
        Case("graphlake serve -> /health", 2.0, lambda: serve_once(gl, root)),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="processes per command (median)")
    ap.add_argument(
        "--demo",
        type=Path,
        default=None,
        help="an existing demo graph (default: build one in a temp folder)",
    )
    args = ap.parse_args()
    gl = graphlake_command()
    work = Path(tempfile.mkdtemp(prefix="gl-bench-cli-"))
    try:
        root = args.demo or demo_graph(gl, work)
        print(
            f"{os.cpu_count()} cores, Python {sys.version.split()[0]}, command: "
            f"{' '.join(gl)}, {args.runs} runs each, load {load_average()} at start\n",
            flush=True,
        )
        rows = []
        for case in cases(gl, root):
            case.run()  # warm the OS file cache; not counted
            runs = [case.run() for _ in range(args.runs)]
            wall = median([w for w, _ in runs])
            cpu = median([c for _, c in runs])
            rows.append(
                [
                    case.name,
                    f"{wall:.3f}",
                    f"{cpu:.3f}",
                    f"{case.target_s:.1f}",
                    "PASS" if wall <= case.target_s else "MISS",
                ]
            )
            print(f"  {case.name}: wall {wall:.3f} s, CPU {cpu:.3f} s", flush=True)
        print()
        print(
            render_table(
                ["command", "wall s (median)", "CPU s (median)", "target s", "wall vs target"], rows
            )
        )
        print(f"load at end: {load_average()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
