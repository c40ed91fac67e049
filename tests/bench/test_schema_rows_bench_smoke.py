"""Smoke run of the schema-rows benchmark: it runs end to end and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "schema_rows.py"


@pytest.mark.slow
def test_schema_rows_bench_quick_run() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--rows", "2000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graphlake schema-rows benchmark" in proc.stdout
    assert "columns differ (walk)" in proc.stdout
    assert "20 + 20" in proc.stdout
