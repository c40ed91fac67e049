"""`graphlake schema show|plan|apply` and the schema mark in `graphlake log`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from tests.cli.helpers import SCHEMA, run, run_all, stdout

NEW = SCHEMA.replace("age: I32?", "years: I64? @renamed_from(age)  nick: String?")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli-schema") / "g"
    g = gl.Graph.init(str(path), SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "Alice", "age": 30}, {"name": "Bob"}])
    g.create_branch("dev")
    return path


def test_show_plan_apply_and_log(root: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.pg"
    new.write_text(NEW)
    same = tmp_path / "same.pg"
    same.write_text(SCHEMA)
    shown, planned_json, unchanged = run_all(
        ("schema", "show", root),
        ("schema", "plan", root, new, "--branch", "dev", "--json"),
        ("schema", "plan", root, same),
    )
    assert stdout(shown) == SCHEMA
    plan = json.loads(stdout(planned_json))
    assert [s["kind"] for s in plan["steps"]] == [
        "rename_property",
        "widen_property",
        "add_property",
    ]
    assert plan["cost"] == "column" and plan["commit"] is None
    assert "no changes" in stdout(unchanged)
    assert gl.Graph.open(str(root)).schema_text("dev") == SCHEMA  # the plans wrote nothing

    applied = run("schema", "apply", root, new, "--branch", "dev", "-m", "rename age")
    assert "Published" in stdout(applied) and "rename_property" in applied.stdout
    show_dev, log, log_json = run_all(
        ("schema", "show", root, "--branch", "dev"),
        ("log", root, "--branch", "dev", "-n", "2"),
        ("log", root, "--branch", "dev", "-n", "2", "--json"),
    )
    assert stdout(show_dev) == NEW
    assert "[schema] rename age" in stdout(log)
    marks = [c["schema_change"] for c in json.loads(stdout(log_json))]
    assert marks == [True, False]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("node Person { name: String @key\n  age: Strng? }", "line 2, column 8"),
        (SCHEMA.replace("age: I32?", "age: I32"), "age is null"),
    ],
)
def test_bad_schemas_fail_with_one_line(
    root: Path, tmp_path: Path, text: str, message: str
) -> None:
    file = tmp_path / "bad.pg"
    file.write_text(text)
    head = gl.Graph.open(str(root)).head().id
    proc = run("schema", "apply", root, file)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert gl.Graph.open(str(root)).head().id == head


def test_unknown_branch(root: Path, tmp_path: Path) -> None:
    file = tmp_path / "s.pg"
    file.write_text(SCHEMA)
    proc = run("schema", "plan", root, file, "--branch", "nope")
    assert proc.returncode == 1 and "nope" in proc.stderr
