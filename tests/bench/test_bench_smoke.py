"""Smoke run of the write benchmark: it runs end to end and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "write.py"


@pytest.mark.slow
def test_write_bench_quick_run() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--rows", "20000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graphlake write benchmark" in proc.stdout
    header = next(line for line in proc.stdout.splitlines() if line.startswith("figure"))
    assert header.split() == ["figure", "value", "target", "verdict"]
    assert "one-row update latency" in proc.stdout
