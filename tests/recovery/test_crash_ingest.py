"""An ingest killed after its merge, or while removing its shard branches, finishes on
rerun with the same run id: every row exactly once, no shard branch left, fsck clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import graphlake as gl
from graphlake import faults
from tests.ingest.helpers import SCHEMA, ingest_branches, keys, write_parquet_files

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
import graphlake as gl
g = gl.Graph.open(sys.argv[1])
gl.ingest(g, sys.argv[2], table="Doc", workers=2, run_id="crashy", progress=False)
"""


@pytest.mark.parametrize("point", ["ingest.after_merge", "ingest.during_cleanup"])
def test_ingest_resumes_after_a_crash_in_cleanup(tmp_path, point: str) -> None:
    files = write_parquet_files(tmp_path / "in", [300, 200])
    root = tmp_path / "g"
    gl.Graph.init(root, SCHEMA)
    env = {**os.environ, faults.ENV: point}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root), str(files[0].parent)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == faults.EXIT_CODE, proc.stderr[-2000:]
    g = gl.Graph.open(root)
    assert len(keys(g)) == 500  # the merge had landed before the crash
    assert g.fsck().ok

    result = gl.ingest(g, files[0].parent, table="Doc", run_id="crashy", progress=False)
    assert result.rows == 500
    assert ingest_branches(g) == []
    assert len(keys(g)) == len(set(keys(g))) == 500
    assert g.fsck().ok
