"""`graphlake mr ...` and `--resolve FILE.json` on merge, merge-many and mr merge."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli.app import app
from tests.review.test_reviews import _conflicted, res

runner = CliRunner()


def _write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_request_lifecycle_and_resolve_file(tmp_path: Path) -> None:
    g = _conflicted(tmp_path)
    root = g.repo.uri
    r = runner.invoke(app, ["--author", "ann", "mr", "open", root, "dev", "--title", "Alice"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["mr", "list", root, "--json"])
    [mr] = json.loads(r.stdout)
    rid = str(mr["id"])
    assert mr["author"] == "ann" and mr["state"] == "open"
    r = runner.invoke(app, ["--author", "ann", "mr", "approve", root, rid])
    assert r.exit_code == 1 and "cannot approve" in r.output
    assert runner.invoke(app, ["--author", "bo", "mr", "approve", root, rid]).exit_code == 0
    r = runner.invoke(app, ["--author", "bo", "mr", "comment", root, rid, "looks fine"])
    assert r.exit_code == 0
    shown = json.loads(runner.invoke(app, ["mr", "show", root, rid, "--json"]).stdout)
    assert shown["preview"]["outcome"] == "conflict" and len(shown["preview"]["approvals"]) == 1
    r = runner.invoke(app, ["mr", "show", root, rid])
    assert r.exit_code == 0 and "commented by bo: looks fine" in r.output
    head = g.head().id
    r = runner.invoke(app, ["mr", "merge", root, rid])
    assert r.exit_code == 1 and g.head().id == head  # conflicts
    bad = _write(tmp_path, "bad.json", [res("age", "value", "old")])
    assert runner.invoke(app, ["mr", "merge", root, rid, "--resolve", bad]).exit_code == 2
    assert runner.invoke(app, ["mr", "merge", root, rid, "--resolve", "/nonexistent"]).exit_code
    good = _write(
        tmp_path, "good.json", {"resolutions": [res("age", "value", 35), res("email", "theirs")]}
    )
    r = runner.invoke(app, ["--author", "bo", "mr", "merge", root, rid, "--resolve", good])
    assert r.exit_code == 0, r.output
    assert g.get("Person", "Alice")["age"] == 35
    assert g.head().meta["merge_request"] == int(rid)
    r = runner.invoke(app, ["mr", "list", root, "--state", "merged", "--json"])
    assert [m["id"] for m in json.loads(r.stdout)] == [int(rid)]
    assert runner.invoke(app, ["mr", "close", root, rid]).exit_code == 1  # merged already
    r = runner.invoke(app, ["mr", "show", root, "99"])
    assert r.exit_code == 1


def test_merge_and_merge_many_resolve(tmp_path: Path) -> None:
    g = _conflicted(tmp_path)
    root = g.repo.uri
    g.create_branch("other", "main~1")
    with g.write("other") as w:
        w.update("Person", [{"name": "Bob", "age": 50}])
    resolve = _write(tmp_path, "r.json", [res("age", "ours"), res("email", "theirs")])
    r = runner.invoke(app, ["merge", root, "dev", "--dry-run", "--resolve", resolve, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["outcome"] == "merged"
    r = runner.invoke(app, ["merge-many", root, "dev", "other", "--resolve", resolve])
    assert r.exit_code == 0, r.output
    alice = g.get("Person", "Alice")
    assert (alice["age"], alice["email"]) == (40, "a@x.org")
    assert g.get("Person", "Bob")["age"] == 50
    assert isinstance(g.head().meta["resolutions"], tuple)
    assert gl.Graph.open(root).head().id == g.head().id
