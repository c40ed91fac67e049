"""Smoke run of the history benchmark: it runs end to end, prints its table, and the
walk reads only the commits that changed the row (the rest are skipped)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "history.py"


@pytest.mark.slow
def test_history_bench_tiny_run() -> None:
    env = dict(os.environ, PYTHONPATH=str(BENCH.parents[1] / "src"))
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--sizes",
            "300,600",
            "--commits",
            "20",
            "--every",
            "5",
            "--runs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # 1: a target missed (noise)
    rows = [line.split() for line in proc.stdout.splitlines() if line[:3] in ("300", "600")]
    assert len(rows) == 4, proc.stdout
    for row in rows:
        # rows, op, cold, warm, entries, commits read, rows read. History: 4 changes and
        # the load; blame: 3 properties; both read those 5 commits of the 20.
        entries, commits = int(row[4]), int(row[5])
        assert commits == 5 and entries == (5 if row[1] == "history" else 3), row
