"""`graphlake insert|upsert|update|delete`: edits from the shell, one commit per command,
with typed one-line errors that change nothing (issue 14, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from tests.cli.helpers import RECORDS, SCHEMA, error, parsed, run, run_all, write_jsonl


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The helpers' small social graph, made with the library (setup is not under test)."""
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    g.load(RECORDS)
    return tmp_path / "g"


def _people(root: Path) -> dict[str, int | None]:
    return {r["name"]: r["age"] for r in gl.Graph.open(root).nodes("Person").to_pylist()}


def test_insert_takes_rows_as_arguments_rows_and_file_in_one_commit(
    root: Path, tmp_path: Path
) -> None:
    before = gl.Graph.open(root).head().id
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"name": "Eve", "age": 22}])
    out = parsed(
        run(
            "insert",
            root,
            "Person",
            '{"name": "Dan"}',
            "--rows",
            '[{"name": "Fay", "age": 5}]',
            "--file",
            rows,
            "--json",
        )
    )
    assert out["op"] == "insert" and out["rows"] == 3 and out["changed"]
    g = gl.Graph.open(root)
    head = g.head()
    assert head.id == out["commit"] and head.parents == (before,)  # one commit
    assert head.message == "insert Person (3 rows)"
    assert {k: v for k, v in _people(root).items() if k in ("Dan", "Eve", "Fay")} == {
        "Dan": None,
        "Eve": 22,
        "Fay": 5,
    }


def test_update_upsert_and_delete_with_branch_and_message(root: Path) -> None:
    gl.Graph.open(root).create_branch("dev")
    update, upsert = run_all(
        ("update", root, "Person", '{"name": "Bob", "age": 41}', "-b", "dev", "--json"),
        ("upsert", root, "Company", '{"name": "Initech"}', "--branch", "main", "--json"),
    )
    assert parsed(update)["branch"] == "dev" and parsed(upsert)["branch"] == "main"
    deleted = parsed(run("delete", root, "Knows", _knows_id(root), "-m", "no edge", "--json"))
    g = gl.Graph.open(root)
    assert g.get("Person", "Bob", branch="dev")["age"] == 41  # type: ignore[index]
    assert g.get("Person", "Bob")["age"] == 40  # type: ignore[index]
    assert g.get("Company", "Initech") is not None
    assert g.edges("Knows").num_rows == 0
    assert deleted["commit"] == g.head().id and g.head().message == "no edge"


def _knows_id(root: Path) -> str:
    return gl.Graph.open(root).edges("Knows").column("id")[0].as_py()


def test_delete_of_a_node_with_edges_needs_cascade_and_says_so(root: Path) -> None:
    head = gl.Graph.open(root).head().id
    line = error(run("delete", root, "Person", "Alice"))
    assert "--cascade" in line and "cascade=True" not in line
    assert gl.Graph.open(root).head().id == head
    text = run("delete", root, "Person", "Alice", "--cascade")
    assert text.returncode == 0, text.stderr
    assert "Deleted 1 key of Person" in text.stdout
    g = gl.Graph.open(root)
    assert g.get("Person", "Alice") is None and g.edges("WorksAt").num_rows == 0


def test_inserting_an_existing_key_names_the_cli_commands(root: Path) -> None:
    line = error(run("insert", root, "Person", '{"name": "Bob"}'))
    assert "graphlake upsert" in line and "graphlake update" in line
    assert "(use upsert or update" not in line


def test_coerce_casts_what_is_refused_without_it(root: Path) -> None:
    row = '{"name": "Bob", "age": "41"}'
    line = error(run("update", root, "Person", row))
    assert "Person.age" in line and "I32" in line
    cast = run("update", root, "Person", row, "--coerce")
    assert cast.returncode == 0, cast.stderr
    assert _people(root)["Bob"] == 41


BAD_JSON = [  # arguments after `insert ROOT Person`, and what the error line names
    (('{"name": "Dan"}', '{"name": Eve}'), "argument 2: not valid JSON"),
    (("--rows", '[{"name": "Dan"},'), "--rows: not valid JSON"),
    (("--rows", '[{"name": "Dan"}, 7]'), "--rows item 2: expected a JSON object"),
    (('["Dan"]',), "argument 1: expected a JSON object (a row), got an array"),
    (("--file", "ROWS"), "rows.jsonl:3: not valid JSON"),
]


def test_a_row_that_does_not_parse_names_where_and_changes_nothing(
    root: Path, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"name": "Dan"}\n\n{"name": \n')
    head = gl.Graph.open(root).head().id
    procs = run_all(
        *(
            ("insert", root, "Person", *(rows if a == "ROWS" else a for a in args))
            for args, _ in BAD_JSON
        )
    )
    for proc, (_, where) in zip(procs, BAD_JSON, strict=True):
        assert where in error(proc)
    assert gl.Graph.open(root).head().id == head


BAD_EDITS = [  # a command after ROOT, and what its error line says
    (("insert", "Person"), "no rows given"),
    (("delete", "Person"), "no keys given"),
    (("insert", "Nope", '{"name": "x"}'), "unknown node or edge type 'Nope'"),
    (("update", "Person", '{"name": "Zed", "age": 1}'), "Zed"),
    (("delete", "Person", "Zed"), "Zed"),
    (("insert", "Person", '{"name": "Dan", "shoe": 9}'), "no property 'shoe'"),
    (("insert", "Person", '{"name": "Dan"}', "-b", "nope"), "no branch 'nope'"),
]


def test_bad_edits_are_one_line_errors_that_change_nothing(root: Path) -> None:
    head = gl.Graph.open(root).head().id
    procs = run_all(*((op, root, *rest) for (op, *rest), _ in BAD_EDITS))
    for proc, (_, message) in zip(procs, BAD_EDITS, strict=True):
        assert message in error(proc)
    assert gl.Graph.open(root).head().id == head


def test_delete_reads_keys_from_a_file(root: Path, tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("Carol\n\n")
    out = parsed(run("delete", root, "Person", "--file", keys, "--json"))
    assert out["rows"] == 1 and gl.Graph.open(root).get("Person", "Carol") is None


def test_rows_may_come_from_stdin(root: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphlake.cli.app",
            "insert",
            str(root),
            "Company",
            "--file",
            "-",
            "--json",
        ],
        input=json.dumps({"name": "Globex"}) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert gl.Graph.open(root).get("Company", "Globex") is not None
