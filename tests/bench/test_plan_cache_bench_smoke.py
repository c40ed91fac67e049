"""Smoke run of bench/plan_cache.py --quick: it runs end to end and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_plan_cache_bench_quick_run() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "plan_cache.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graphlake plan cache benchmark" in proc.stdout
    rows = [line for line in proc.stdout.splitlines() if "(csr)" in line or "(sql)" in line]
    assert len(rows) == 4
