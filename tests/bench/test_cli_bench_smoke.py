"""Smoke run of bench/cli.py: it times every command it names and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cli.py"
COMMANDS = (
    "graphlake --help",
    "graphlake --version",
    "graphlake log (demo)",
    "graphlake branch list (demo)",
    "graphlake serve -> /health",
)


@pytest.mark.slow
def test_cli_bench_runs_every_command_and_reports() -> None:
    pytest.importorskip("uvicorn")
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=500,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = {
        line.split("  ")[0]: line.split()
        for line in proc.stdout.splitlines()
        if line.startswith("graphlake ") and line.split()[-1] in ("PASS", "MISS")
    }
    assert set(rows) == set(COMMANDS), proc.stdout
    for cells in rows.values():
        wall, cpu = float(cells[-4]), float(cells[-3])
        assert wall > 0 and cpu > 0
