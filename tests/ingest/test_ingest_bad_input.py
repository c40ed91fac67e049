"""Bad input is refused with a typed error before any branch, plan or worker exists."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.ingestion import IngestError, ingest
from tests.ingest.helpers import (
    SCHEMA,
    doc_records,
    ingest_branches,
    run_objects,
    write_jsonl,
    write_parquet_files,
)


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Doc", [{"key": "seed", "n": 0}])
    return g


def _parquet(tmp_path: Path) -> Path:
    return write_parquet_files(tmp_path / "in", [100])[0]


def _garbage(tmp_path: Path) -> Path:
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    return path


def _jsonl(tmp_path: Path, first: str | None = None) -> Path:
    recs: list = doc_records(10)
    if first is not None:
        recs[0] = first
    return write_jsonl(tmp_path / "d.jsonl", recs)


CASES: dict[str, tuple[Callable[[Path], dict], type[Exception], str]] = {
    "missing file": (
        lambda t: {"sources": t / "nope.parquet", "table": "Doc"},
        gl.LoadFormatError,
        "no such file",
    ),
    "missing file in a list": (
        lambda t: {"sources": [_parquet(t), t / "nope.parquet"], "table": "Doc"},
        gl.LoadFormatError,
        "no such file",
    ),
    "unparseable parquet": (
        lambda t: {"sources": _garbage(t), "table": "Doc"},
        gl.LoadFormatError,
        "not a readable Parquet file",
    ),
    "parquet without table": (lambda t: {"sources": _parquet(t)}, gl.DataError, "needs a table"),
    "unknown table": (
        lambda t: {"sources": _parquet(t), "table": "Nope"},
        gl.UnknownTableError,
        "unknown node or edge type 'Nope'",
    ),
    "parquet columns do not fit the table": (
        lambda t: {"sources": _parquet(t), "table": "Tag"},
        gl.UnknownPropertyError,
        "has no property",
    ),
    "jsonl with a table": (
        lambda t: {"sources": _jsonl(t), "table": "Doc"},
        gl.DataError,
        "Parquet input only",
    ),
    "bad first jsonl line": (
        lambda t: {"sources": _jsonl(t, "{oops")},
        gl.LoadFormatError,
        r"d\.jsonl:1: not valid JSON",
    ),
    "first jsonl line nested too deeply": (
        lambda t: {"sources": _jsonl(t, "[" * 1000 + "]" * 1000)},
        gl.LoadFormatError,
        r"d\.jsonl:1: .*nested too deeply",
    ),
    "integer too long on the first jsonl line": (
        lambda t: {
            "sources": _jsonl(t, '{"type": "Doc", "data": {"key": "k", "n": 1' + "0" * 5000 + "}}")
        },
        gl.LoadFormatError,
        r"d\.jsonl:1: .*more than 4300 digits",
    ),
    "unknown type in jsonl": (
        lambda t: {"sources": _jsonl(t, '{"type": "Nope", "data": {}}')},
        gl.UnknownTableError,
        "unknown node type 'Nope'",
    ),
    "mixed formats": (
        lambda t: {"sources": [_parquet(t), _jsonl(t)], "table": "Doc"},
        gl.DataError,
        "mix Parquet and JSONL",
    ),
    "same file twice": (
        lambda t: {"sources": [_parquet(t), _parquet(t)], "table": "Doc"},
        gl.DataError,
        "given twice",
    ),
    "empty folder": (
        lambda t: {"sources": (t / "empty").mkdir() or t / "empty"},
        gl.LoadFormatError,
        "no data files",
    ),
    "empty input": (
        lambda t: {"sources": write_jsonl(t / "e.jsonl", [""])},
        gl.DataError,
        "nothing to ingest",
    ),
    "unknown engine": (
        lambda t: {"sources": _parquet(t), "table": "Doc", "engine": "dask"},
        IngestError,
        "unknown ingest engine 'dask'",
    ),
    "workers=0": (
        lambda t: {"sources": _parquet(t), "table": "Doc", "workers": 0},
        gl.DataError,
        "workers must be a positive integer",
    ),
    "commit_every=0": (
        lambda t: {"sources": _parquet(t), "table": "Doc", "commit_every": 0},
        gl.DataError,
        "commit_every must be a positive integer",
    ),
    "bad run id": (
        lambda t: {"sources": _parquet(t), "table": "Doc", "run_id": "a/b"},
        gl.InvalidNameError,
        "invalid ingest run id",
    ),
    "unknown target branch": (
        lambda t: {"sources": _parquet(t), "table": "Doc", "into": "nope"},
        gl.BranchNotFoundError,
        "nope",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_refused_before_anything_is_written(
    g: gl.Graph, tmp_path: Path, case: str
) -> None:
    make, error, match = CASES[case]
    head, branches = g.head().id, g.branches()
    kwargs = make(tmp_path)
    with pytest.raises(error, match=match):
        ingest(g, kwargs.pop("sources"), progress=False, **kwargs)
    assert g.head().id == head and g.branches() == branches
    assert ingest_branches(g) == [] and run_objects(g) == []


def test_ray_missing_is_a_clear_error(
    g: gl.Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, find_spec says None
    with pytest.raises(IngestError, match=r"pip install 'graphlake\[ray\]'"):
        ingest(g, _parquet(tmp_path), table="Doc", engine="ray", progress=False)
    assert run_objects(g) == []


def test_the_core_never_imports_ray() -> None:
    code = (
        "import sys, graphlake, graphlake.ingestion, graphlake.ingestion.engines, "
        "graphlake.ingestion.worker, graphlake.cli.app; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"
