"""The CLI of issue 25: `--author`, authors and tags in `log`, `graphlake tag`."""

from __future__ import annotations

from pathlib import Path

import graphlake as gl
from tests.cli.helpers import SCHEMA, error, parsed, run, run_all, stdout


def test_author_tags_and_log(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA, author="Init")
    env = {"GRAPHLAKE_AUTHOR": "Env <env@x.org>", "XDG_CONFIG_HOME": str(tmp_path)}
    stdout(run("--author", "Ada <ada@x.org>", "insert", root, "Person", '{"name": "a"}',
               env=env))
    stdout(run("insert", root, "Person", '{"name": "b"}', env=env))
    stdout(run("tag", "create", root, "v1", "main~1", "-m", "first", env=env))
    log, tags, clash, bad, table = run_all(
        ("log", root, "--json"), ("tag", "list", root, "--json"),
        ("tag", "create", root, "v1"), ("--author", "<x>", "tag", "create", root, "v2"),
        ("log", root))
    commits = parsed(log)
    assert [c["author"] for c in commits] == ["Env <env@x.org>", "Ada <ada@x.org>", "Init"]
    assert [c["tags"] for c in commits] == [[], ["v1"], []]
    assert [(t["name"], t["commit"], t["author"], t["message"]) for t in parsed(tags)] == [
        ("v1", commits[1]["id"], "Env <env@x.org>", "first")]
    assert "exists already" in error(clash)
    assert "invalid author" in error(bad)
    assert "(tag: v1)" in stdout(table) and "Ada" in stdout(table)
    stdout(run("tag", "delete", root, "v1"))
    assert "no tag 'v1'" in error(run("tag", "delete", root, "v1"))
    assert g.tags() == {}
