"""Smoke run of bench/sharded_ingest.py --quick: it runs and prints its tables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "sharded_ingest.py"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sharded_ingest_quick_runs_and_reports() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    assert out.startswith("machine: ") and "cores" in out.splitlines()[0]
    assert "workers  seconds  rows/s" in out
    assert "shards  rows/shard  merge s" in out
    ingest_rows = [ln.split() for ln in out.splitlines() if ln[:2] in ("1 ", "2 ")]
    assert [r[0] for r in ingest_rows[:2]] == ["1", "2"], out
    assert "targets (" in out and "rows/s" in out.split("targets (")[1]
    assert out.count("PASS") + out.count("MISS") >= 2, out
