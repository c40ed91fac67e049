"""`graphlake data-check set|list|run` (in process, typer's runner)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app
from tests.review.test_data_checks import DUP_CYPHER, DUP_SQL, PEOPLE

runner = CliRunner()


def test_set_list_run_remove_and_file(tmp_path: Path) -> None:
    root = str(tmp_path / "g")
    g = gl.Graph.init(root, PEOPLE)
    with g.write() as w:
        w.insert("Person", [{"name": "Ann", "email": "x@x"}, {"name": "Ben", "email": "x@x"}])
    r = runner.invoke(app, ["data-check", "set", root, "dup", DUP_CYPHER])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["data-check", "set", root, "dup_sql", DUP_SQL, "-m", "sql too"])
    assert r.exit_code == 0 and g.head().message == "sql too"
    r = runner.invoke(app, ["data-check", "list", root, "--json"])
    assert json.loads(r.stdout)["dup_sql"] == {"language": "sql", "query": DUP_SQL}
    r = runner.invoke(app, ["data-check", "run", root])
    assert r.exit_code == 1 and "FAIL" in r.output and "Ann" in r.output
    r = runner.invoke(app, ["data-check", "run", root, "main~2", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == []
    head = g.head().id
    r = runner.invoke(app, ["data-check", "set", root, "bad", "DROP TABLE Person"])
    assert r.exit_code == 1 and "error:" in r.output and g.head().id == head
    r = runner.invoke(app, ["data-check", "set", root, "nope", "--remove"])
    assert r.exit_code == 1 and g.head().id == head
    r = runner.invoke(app, ["data-check", "set", root, "dup", "--remove"])
    assert r.exit_code == 0 and list(g.data_checks()) == ["dup_sql"]
    spec = tmp_path / "checks.json"
    spec.write_text(json.dumps({"none": "SELECT 1 WHERE false"}))
    r = runner.invoke(app, ["data-check", "set", root, "--file", str(spec)])
    assert r.exit_code == 0 and list(g.data_checks()) == ["none"]
    r = runner.invoke(app, ["data-check", "run", root])
    assert r.exit_code == 0 and "pass" in r.output
    r = runner.invoke(app, ["data-check", "run", root, "nosuch"])
    assert r.exit_code == 2
