"""What the CLI prints is safe to read and to copy (issue 14, item 7): control characters
in stored text are shown escaped, identifiers users copy are never cut at 80 columns, and
hints name the CLI's own options."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console

import graphlake as gl
from graphlake.cli import ingest_status
from graphlake.ingestion.status import RunSummary
from tests.cli.helpers import SCHEMA, error, run, run_all

EVIL = "evil\x1b[2J\x1b]0;pwned\x07\x9b31m\u202egnp.exe"
SHOWN = "evil\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\u202egnp.exe"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write(message=f"add {EVIL}") as w:
        w.insert("Person", [{"name": EVIL, "age": 1}, {"name": "Bob", "age": 2}])
    return tmp_path / "g"


def _is_clean(text: str) -> bool:
    return not any(ch in text for ch in ("\x1b", "\x07", "\x9b", "\u202e"))


def test_control_characters_in_stored_text_are_printed_escaped(root: Path) -> None:
    show, sql, log, graph, diff, failed = run_all(
        ("show", root, "Person"),
        ("sql", root, "SELECT name, [name] AS names FROM Person"),
        ("log", root),
        ("log", root, "--graph", "--stat"),
        ("diff", root, "main~1", "main"),
        ("update", root, "Person", '{"name": "x\\u001b[2J", "age": 3}'),
    )
    for proc in (show, sql, log, graph, diff):
        assert proc.returncode == 0, proc.stderr
        assert _is_clean(proc.stdout) and SHOWN in proc.stdout, proc.stdout
    line = error(failed)  # the error names the key it did not find, escaped
    assert _is_clean(line) and "x\\x1b[2J" in line


def test_json_output_keeps_the_stored_text(root: Path) -> None:
    proc = run("show", root, "Person", "--where", "age = 1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [{"id": EVIL, "name": EVIL, "age": 1, "embedding": None}]


def test_conflict_keys_are_not_cut_at_80_columns(tmp_path: Path) -> None:
    key = "person-with-a-long-key-that-users-copy-0123456789"
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": key, "age": 1}])
    g.create_branch("dev")
    for branch, age in (("main", 2), ("dev", 3)):
        with g.write(branch) as w:
            w.update("Person", [{"name": key, "age": age}])
    proc = run("merge", tmp_path / "g", "dev", env={"COLUMNS": "80"})
    assert proc.returncode == 1, proc.stderr
    assert key in proc.stdout, proc.stdout  # whole, on one line


def test_run_ids_are_not_cut_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = "01KBC8Z3M8Q0N5W7X2Y4Z6A8B0"
    out = io.StringIO()
    monkeypatch.setattr(ingest_status, "console", Console(file=out, width=80, no_color=True))
    ingest_status.print_runs(
        [
            RunSummary(
                run_id=run_id,
                state="failed",
                created="2026-12-01T15:00:00.000000Z",
                into="a-target-branch-with-a-long-name",
                format="jsonl",
                table=None,
                workers=4,
                phases=["nodes"],
                done=1_000_000,
                total=2_000_000,
                rows=1_000_000,
                unit="lines",
            )
        ]
    )
    assert run_id in out.getvalue(), out.getvalue()


def test_a_parquet_load_of_the_wrong_type_names_the_cli_option(root: Path, tmp_path: Path) -> None:
    data = tmp_path / "people.parquet"
    pq.write_table(pa.table({"name": ["Zoe"], "age": ["7"]}), data)
    strict, cast = run_all(
        ("load", root, data, "--table", "Person"),
        ("load", root, data, "--table", "Person", "--coerce", "-b", "main"),
    )
    line = error(strict)  # refused before anything is written, whichever runs first
    assert "Person.age" in line and "--coerce" in line and "coerce=True" not in line
    assert cast.returncode == 0, cast.stderr
    assert gl.Graph.open(root).get("Person", "Zoe")["age"] == 7  # type: ignore[index]
