"""The ingest guide's Python ingest snippet runs as pasted; without its main guard, a script
fails at once with one line that says what to add (not with a resume advice)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphlake as gl
from graphlake.ingestion.guard import ADVICE

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
PERSON = "node Person { name: String @key  age: I32? }"


def _snippet() -> str:
    page = (REPO / "docs" / "guides" / "ingest.md").read_text(encoding="utf-8")
    section = page.split("# Parallel ingest", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _prepare(folder: Path) -> gl.Graph:
    g = gl.Graph.init(folder / "my-graph", PERSON)
    for i in range(2):
        pq.write_table(
            pa.table({"name": [f"p{i}-{j}" for j in range(50)]}), folder / f"part-{i}.parquet"
        )
    return g


def _run(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    script = folder / "load.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)], cwd=folder, capture_output=True, text=True, timeout=300
    )


def test_the_readme_snippet_runs_as_pasted(tmp_path: Path) -> None:
    g = _prepare(tmp_path)
    proc = _run(tmp_path, _snippet())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "100 rows as commit" in proc.stdout
    assert g.nodes("Person").num_rows == 100 and len(g.head().parents) == 5  # workers=4


def test_a_script_without_the_main_guard_is_told_to_add_it(tmp_path: Path) -> None:
    g = _prepare(tmp_path)
    trunk = g.head().id
    body = _snippet().split('if __name__ == "__main__":', 1)[1].split("\n", 1)[1]
    proc = _run(tmp_path, "import graphlake as gl\n" + textwrap.dedent(body))
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"graphlake.ingestion.guard.MainGuardError: {ADVICE}"
    assert "resume" not in last and "run_id" not in proc.stderr.split("MainGuardError")[-1]
    assert g.head().id == trunk
