"""Smoke run of bench/ui_pages.py on a tiny graph: every page answers and is timed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ui_pages.py"


def test_ui_pages_bench_times_every_page() -> None:
    pytest.importorskip("jinja2")
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--rows", "1000", "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("/ui/")]
    assert len(rows) == 12, proc.stdout
    for cells in rows:
        first, median = float(cells[-3]), float(cells[-2])
        assert first > 0 and median > 0
