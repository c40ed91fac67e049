"""Smoke run of the schema benchmark: it runs end to end and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "schema.py"


@pytest.mark.slow
def test_schema_bench_quick_run() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--rows", "2000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "graphlake schema benchmark" in proc.stdout
    assert "merge backfill: route / conflicts" in proc.stdout
    assert "column_write / 0" in proc.stdout
