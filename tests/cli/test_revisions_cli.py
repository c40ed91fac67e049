"""Revisions on the command line: reading commands take any revision with --branch,
`diff` and `log` take ranges, `merge` takes a commit; writes and errors are one line."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

import graphlake as gl
from tests.cli.helpers import RECORDS, SCHEMA, error, parsed, run, run_all, stdout, write_jsonl


class History(NamedTuple):
    root: Path
    ids: dict[str, str]
    rows: Path


def _build(root: Path, rows: Path) -> History:
    """loaded -> m1 on main; d1 (insert Dave), d2 (Bob 41) on dev; main = merge of dev."""
    g = gl.Graph.init(root, SCHEMA)
    g.load(write_jsonl(rows, RECORDS))
    ids = {"loaded": g.head().id}
    g.create_branch("dev")
    with g.write("dev", "d1") as w:
        w.insert("Person", [{"name": "Dave"}])
    ids["d1"] = g.head("dev").id
    with g.write("dev", "d2") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    ids["d2"] = g.head("dev").id
    with g.write("main", "m1") as w:
        w.insert("Person", [{"name": "Mia"}])
    ids["m1"] = g.head().id
    return History(root, ids, rows)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    d = tmp_path_factory.mktemp("rev")
    h = _build(d / "graph", d / "rows.jsonl")
    gl.Graph.open(h.root).merge("dev", message="M")
    return h


def test_reading_commands_take_revisions(history: History) -> None:
    root, ids = history.root, history.ids
    show, sql, log, log_range, diff_json, diff_text = run_all(
        ("show", root, "Person", "-b", "main^2~1", "--json"),
        ("sql", root, "SELECT count(*) AS n FROM Person", "-b", ids["m1"][:8], "--json"),
        ("log", root, "-b", "main^2", "--json"),
        ("log", root, "-b", "main~1...dev", "--json"),
        ("diff", root, "main~1...dev", "--json"),
        ("diff", root, "main~1...dev"),
    )
    people = {r["id"]: r for r in parsed(show)}
    assert set(people) == {"Alice", "Bob", "Carol", "Dave"} and people["Bob"]["age"] == 40
    assert parsed(sql) == [{"n": 4}]
    assert [c["id"] for c in parsed(log)][:3] == [ids["d2"], ids["d1"], ids["loaded"]]
    assert [c["id"] for c in parsed(log_range)] == [ids["d2"], ids["d1"]]
    changes = parsed(diff_json)
    assert list(changes) == ["Person"]
    person = changes["Person"]
    assert (person["inserted"], person["updated"], person["deleted"]) == (
        ["Dave"],
        {"Bob": ["age"]},
        [],
    )
    text = stdout(diff_text)
    assert "merge base of main~1 and dev" in text and "Mia" not in text


def test_revision_errors_are_one_line(history: History) -> None:
    root = history.root
    unknown, past, malformed, bad_range, write, not_range = run_all(
        ("show", root, "Person", "-b", "mian"),
        ("log", root, "-b", "main~99"),
        ("sql", root, "SELECT 1", "-b", "main~x"),
        ("log", root, "-b", "main..."),
        ("load", root, history.rows, "-b", "main~1"),
        ("diff", root, "main"),
    )
    assert "unknown revision 'mian'" in error(unknown) and "did you mean main?" in error(unknown)
    assert "past the root" in error(past)
    assert "invalid revision 'main~x'" in error(malformed)
    assert "A...B" in error(bad_range)
    assert "not a branch" in error(write)
    assert "not a range" in error(not_range)


def test_merge_takes_a_commit(tmp_path: Path) -> None:
    h = _build(tmp_path / "graph", tmp_path / "rows.jsonl")
    merged = parsed(run("merge", h.root, h.ids["d1"][:10], "--json"))
    assert merged["outcome"] == "merged"
    g = gl.Graph.open(h.root)
    assert g.head().parents == (h.ids["m1"], h.ids["d1"])
    assert g.get("Person", "Bob")["age"] == 40  # only d1 was merged
    past, into_commit, by_revision, branched = run_all(
        ("merge", h.root, "dev~9"),
        ("merge", h.root, "dev", "--into", "main~1"),
        ("merge", h.root, "dev~0", "--json"),
        ("branch", "create", h.root, "fix", "--from", "dev~1"),
    )
    assert "past the root" in error(past, code=2)
    assert "not a branch" in error(into_commit, code=2)
    assert parsed(by_revision)["outcome"] == "merged"
    assert "(from dev~1)" in stdout(branched)
    g = gl.Graph.open(h.root)
    assert g.head().parents[1] == h.ids["d2"]
    assert g.head("fix").id == h.ids["d1"]
