"""Smoke run of bench/query.py --quick: it runs both engines and prints its table."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "query.py"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_query_bench_quick_runs_and_reports() -> None:
    if importlib.util.find_spec("ladybug") is None:  # never imported here (subprocess)
        pytest.skip("ladybug is not installed")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    assert "graphlake 1,000 ms" in out and "ladybug 1,000 ms" in out
    for name in ("1-hop count", "3-hop return", "shortest path", "count by city"):
        assert name in out
    assert "LadybugDB import" in out and "targets (from this run)" in out
