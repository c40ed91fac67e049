"""The public function `gl.ingest` and the package `graphlake.ingestion` have distinct names
(issue 12, item 14): when the package was `graphlake.ingest`, the function shadowed it, so
`import graphlake.ingest.worker as w` failed. Checked in a fresh interpreter, where nothing
imported the modules before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.ingest.helpers import SCHEMA, write_parquet_files

CODE = """
import sys
import graphlake.ingestion.worker as w            # the module, through the attribute path
import graphlake as gl
from graphlake.ingestion.worker import run_slice
import inspect
assert w.run_slice is run_slice and gl.ingestion.worker is w
assert inspect.isfunction(gl.ingest)          # importing the worker did not rebind it
g = gl.Graph.init(sys.argv[1], sys.argv[2])
result = gl.ingest(g, sys.argv[3], table="Doc", workers=1, progress=False)
print(result.rows, len(g.nodes("Doc")))
"""


def test_worker_module_and_public_function_in_a_fresh_process(tmp_path: Path) -> None:
    parquet = write_parquet_files(tmp_path / "in", [30])[0]
    out = subprocess.run(
        [sys.executable, "-c", CODE, str(tmp_path / "g"), SCHEMA, str(parquet)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["30", "30"]
