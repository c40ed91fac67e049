"""Smoke run of the search benchmark at a tiny scale: it runs end to end, prints its table
and the merge does no index work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "search.py"


@pytest.mark.slow
def test_search_bench_tiny_run() -> None:
    pytest.importorskip("lancedb")
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--rows",
            "1000",
            "--dim",
            "8",
            "--queries",
            "5",
            "--shards",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    header = next(line for line in proc.stdout.splitlines() if line.startswith("figure"))
    assert header.split() == ["figure", "value", "target", "verdict"]
    calls = next(line for line in proc.stdout.splitlines() if "vector_index_calls" in line)
    assert calls.split()[-2:] == ["0", "ok"]
