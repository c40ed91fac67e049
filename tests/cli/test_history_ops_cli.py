"""The CLI of issue 25: `--author`, authors and tags in `log`, `graphlake tag`."""

from __future__ import annotations

from pathlib import Path

import graphlake as gl
from tests.cli.helpers import SCHEMA, error, parsed, run, run_all, stdout


def test_author_tags_and_log(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA, author="Init")
    env = {"GRAPHLAKE_AUTHOR": "Env <env@x.org>", "XDG_CONFIG_HOME": str(tmp_path)}
    stdout(run("--author", "Ada <ada@x.org>", "insert", root, "Person", '{"name": "a"}', env=env))
    stdout(run("insert", root, "Person", '{"name": "b"}', env=env))
    stdout(run("tag", "create", root, "v1", "main~1", "-m", "first", env=env))
    log, tags, clash, bad, table = run_all(
        ("log", root, "--json"),
        ("tag", "list", root, "--json"),
        ("tag", "create", root, "v1"),
        ("--author", "<x>", "tag", "create", root, "v2"),
        ("log", root),
    )
    commits = parsed(log)
    assert [c["author"] for c in commits] == ["Env <env@x.org>", "Ada <ada@x.org>", "Init"]
    assert [c["tags"] for c in commits] == [[], ["v1"], []]
    assert [(t["name"], t["commit"], t["author"], t["message"]) for t in parsed(tags)] == [
        ("v1", commits[1]["id"], "Env <env@x.org>", "first")
    ]
    assert "exists already" in error(clash)
    assert "invalid author" in error(bad)
    assert "(tag: v1)" in stdout(table) and "Ada" in stdout(table)
    stdout(run("tag", "delete", root, "v1"))
    assert "no tag 'v1'" in error(run("tag", "delete", root, "v1"))
    assert g.tags() == {}


def test_revert_and_cherry_pick(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write() as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    g.create_branch("dev")
    with g.write("dev") as w:
        w.update("Person", [{"name": "a", "age": 2}])
    with g.write() as w:
        w.update("Person", [{"name": "a", "age": 3}])
    dev = g.head("dev").id
    dry, root_revert = run_all(
        ("cherry-pick", root, dev, "--dry-run", "--json"), ("revert", root, "main~2")
    )
    assert parsed(dry, 1)["outcome"] == "conflict"  # a dry run with conflicts exits 1
    assert "root commit" in error(root_revert, 2)
    picked, reverted = run_all(
        ("cherry-pick", root, dev, "--into", "main", "--strategy", "theirs", "--json"),
        ("revert", root, dev, "-b", "dev"),
    )
    assert parsed(picked)["outcome"] == "merged"
    assert "Reverted" in stdout(reverted)
    assert g.get("Person", "a")["age"] == 2 and g.get("Person", "a", branch="dev")["age"] == 1
    assert g.head().meta["cherry_picked_from"] == g.head("dev").parents[0]


def test_reset_and_reflog(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(author="W") as w:
        w.insert("Person", [{"name": "a", "age": 1}])
    first = g.head().parents[0]
    assert "Reset main" in stdout(run("--author", "R", "reset", root, "main", first))
    log, unknown = run_all(("reflog", root, "--json"), ("reset", root, "nope", "main"))
    assert [(e["action"], e["author"]) for e in parsed(log)][:2] == [("reset", "R"), ("write", "W")]
    assert "no branch 'nope'" in error(unknown)
    assert g.head().id == first
