"""Smoke run of bench/merge_cost.py --quick: it runs, prints its table and a lineage route."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "merge_cost.py"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_merge_cost_quick_runs_and_reports() -> None:
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
    header = [ln for ln in out.splitlines() if ln.startswith("system ")]
    assert header, out
    assert all(col in header[0] for col in ("merge ms", "Item route/disc", "RSS peak MB"))
    graph_rows = [ln for ln in out.splitlines() if ln.startswith("graphlake ")]
    assert any("/lineage" in ln and " lineage " in ln for ln in graph_rows), out
    assert any("/walk" in ln for ln in graph_rows), out
    assert "targets (ratios from this run)" in out
    assert "machine: " in out and "duckdb" in out
