"""The `graphlake` command line, run as a real subprocess against temporary folders.

Each run costs about a second of interpreter and library start-up, so independent
commands run side by side (`run_all`) and setup that is not under test uses the library.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import NamedTuple

import pytest

import graphlake as gl
from graphlake.cli import demo_data
from tests.cli.helpers import (
    RECORDS,
    SCHEMA,
    as_json,
    concurrently,
    error,
    ok,
    parsed,
    run,
    run_all,
    stdout,
    write_jsonl,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Built(NamedTuple):
    root: Path
    init_commit: str


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("files")
    (d / "social.pg").write_text(SCHEMA)
    write_jsonl(d / "data.jsonl", RECORDS)
    return d


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, files: Path) -> Built:
    """A graph made with `init --json` and loaded with `load --json`; both outputs checked."""
    root = tmp_path_factory.mktemp("g") / "graph"
    init = as_json("init", root, "--schema", files / "social.pg")
    assert init["branch"] == "main" and len(init["commit"]) == 40
    assert init["nodes"] == ["Person", "Company"] and init["edges"] == ["Knows", "WorksAt"]
    loaded = as_json("load", root, files / "data.jsonl")
    assert loaded["branch"] == "main" and loaded["changed"] and loaded["rows_read"] == 6
    assert loaded["tables"] == {
        name: {"rows": n, "delta": n, "inserted": n, "updated": 0, "deleted": 0}
        for name, n in (("Person", 3), ("Company", 1), ("Knows", 1), ("WorksAt", 1))
    }
    return Built(root, init["commit"])


@pytest.fixture
def graph(built: Built) -> Path:
    return built.root


# --- tests ------------------------------------------------------------------------------


def test_log_lists_commits_newest_first(built: Built) -> None:
    log_json, log_text = run_all(("log", built.root, "--json"), ("log", built.root, "--limit", "1"))
    commits = parsed(log_json)
    assert [c["message"] for c in commits] == ["load (append)", "init"]
    assert commits[1]["id"] == built.init_commit and commits[1]["parents"] == []
    assert commits[0]["parents"] == [built.init_commit]
    text = stdout(log_text)
    assert commits[0]["id"][:12] in text and "load (append)" in text
    assert " init " not in text  # --limit 1


def test_show_reads_a_table_with_filter_columns_and_limit(graph: Path) -> None:
    filtered, edges, text = run_all(
        ("show", graph, "Person", "--where", "age >= 30", "--columns", "name,age", "--json"),
        ("show", graph, "Knows", "--json"),
        ("show", graph, "Person", "--columns", "name,embedding", "--limit", "3"),
    )
    assert sorted(parsed(filtered), key=lambda r: r["name"]) == [
        {"name": "Alice", "age": 30},
        {"name": "Bob", "age": 40},
    ]
    assert [(e["src"], e["dst"], e["since"]) for e in parsed(edges)] == [
        ("Alice", "Bob", "2020-05-01")
    ]
    out = stdout(text)
    assert "Person @ main" in out and "Carol" in out and "[0.5, 1]" in out
    assert "first 3 rows" in out


def test_sql_runs_on_a_branch(graph: Path) -> None:
    join = (
        "SELECT p.name AS person, c.name AS company FROM WorksAt w "
        "JOIN Person p ON p.id = w.src JOIN Company c ON c.id = w.dst"
    )
    as_rows, as_text, too_many = run_all(
        ("sql", graph, join, "--json"),
        ("sql", graph, "SELECT count(*) AS people FROM Person", "--branch", "main"),
        ("sql", graph, "SELECT * FROM Person", "--max-rows", "1"),
    )
    assert parsed(as_rows) == [{"person": "Alice", "company": "Acme"}]
    text = stdout(as_text)
    assert "people" in text and " 3 " in text and "1 row @ main" in text
    assert "more than 1 rows" in error(too_many)


def test_branch_create_list_delete(built: Built, files: Path) -> None:
    graph = built.root
    feature, old = run_all(
        ("branch", "create", graph, "feature"),
        ("branch", "create", graph, "old", "--from", built.init_commit[:10]),
    )
    assert "Created branch feature" in stdout(feature)
    assert f"Created branch old at {built.init_commit[:12]}" in stdout(old)

    extra = write_jsonl(files / "extra.jsonl", [{"type": "Person", "data": {"name": "Dan"}}])
    out = ok("load", graph, extra, "--branch", "feature", "-m", "add Dan")
    assert "Loaded 1 row into feature" in out and "add Dan" in out
    assert "Person" in out and "+1" in out

    listed, main_delete = run_all(
        ("branch", "list", graph, "--json"), ("branch", "delete", graph, "main")
    )
    branches = {b["name"]: b for b in parsed(listed)}
    assert set(branches) == {"main", "feature", "old"}
    assert branches["main"]["default"] and not branches["feature"]["default"]
    assert branches["main"]["message"] == "load (append)"  # the load on feature left main
    assert branches["feature"]["message"] == "add Dan"
    assert branches["old"]["head"] == built.init_commit
    assert "default branch" in error(main_delete)

    assert "Deleted branch feature" in ok("branch", "delete", graph, "feature")
    assert gl.Graph.open(graph).branches() == ["main", "old"]


def test_version_and_exit_codes(graph: Path, files: Path) -> None:
    version, usage, unknown, missing = run_all(
        ("--version",),
        ("load", graph, files / "data.jsonl", "--mode", "sideways"),
        ("show", graph, "Person", "--branch", "nope"),
        ("log", files / "missing"),
    )
    assert stdout(version).strip() == f"graphlake {gl.__version__}"
    # A usage error keeps typer's exit code 2; failed operations exit 1 with one line.
    assert usage.returncode == 2 and "sideways" in usage.stderr
    assert "Traceback" not in usage.stderr
    message = error(unknown)
    assert "'nope'" in message and "main" in message
    assert "not a graphlake graph" in error(missing)


def test_bad_schema_and_bad_jsonl_name_the_line(tmp_path: Path, files: Path) -> None:
    bad = tmp_path / "bad.pg"
    bad.write_text("node Person {\n  name: String @key\n  age: Integr\n}\n")
    root = tmp_path / "g"
    gl.Graph.init(root, SCHEMA)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps(RECORDS[1]) + "\n{oops\n")

    # The good load runs on a (pretend) terminal, to show the progress bar on stderr.
    bad_schema, bad_line, good = concurrently(
        partial(run, "init", tmp_path / "g2", "--schema", bad),
        partial(run, "load", root, broken),
        partial(run, "load", root, files / "data.jsonl", env={"TTY_COMPATIBLE": "1"}),
    )
    message = error(bad_schema)
    assert "line 3" in message and "Integr" in message and "bad.pg" in message
    assert "broken.jsonl:3" in error(bad_line)
    assert "Loaded 6 rows into main" in stdout(good)
    assert "loaded" in good.stderr and "6/6" in good.stderr
    # The failed load published nothing: init, then the one good load.
    assert [c.message for c in gl.Graph.open(root).log()] == ["load (append)", "init"]


def test_demo_end_to_end(tmp_path: Path, graph: Path) -> None:
    target = tmp_path / "demo"
    gl.Graph.init(target, SCHEMA)  # an earlier graph, which --fresh replaces
    other = tmp_path / "not-a-graph"
    other.mkdir()
    (other / "keep.txt").write_text("precious")

    # At 80 columns the two branches' tables print one after the other.
    demo, refused, kept = run_all(
        ("demo", target, "--fresh"),
        ("demo", other, "--fresh"),
        ("demo", graph),
        env={"COLUMNS": "80"},
    )
    out = stdout(demo)
    for expected in (
        "Removed the previous graph",
        "Loaded 119 rows into main",
        "Person @ main",
        "Person @ dev",
        "(unchanged)",
        "who works where @ main",
        "who works where @ dev",
        "rows per branch",
        "nearest to Zoe @ dev",
        "hire Zoe at Acme, promote Alice",
        "diff main → dev",
        "Merged dev into main as commit",
        "pointer_adoption",
        "insertion_replay",
        "three_way",
        "Merge of exp into main stopped on 1 conflict",
        "divergent_update",
        "age: 29 → exp 41",
        "Merged exp into main",
        "resolved conflicts",
        "theirs",
        "Bob's age on main is now 41",
        "log of main",
        "merge dev into main",
    ):
        assert expected in out, expected
    before_merge = out.split("main head:")[0]
    main_part, dev_part = before_merge.split("Person @ main")[1].split("Person @ dev")
    assert "Zoe" not in main_part and "eng" in main_part  # Alice before her promotion
    assert "Zoe" in dev_part and "exec" in dev_part
    diff_part = out.split("diff main → dev")[1].split("Merged dev")[0]
    assert "Hooli" in diff_part and "role: eng → exec" in diff_part
    assert "Zoe-at-Acme Zoe → Acme" in diff_part  # edges as src → dst
    assert "refusing" in error(refused)
    assert (other / "keep.txt").read_text() == "precious"

    assert "--fresh" in error(kept)  # a graph is only replaced when asked
    g = gl.Graph.open(target)
    assert g.branches() == ["dev", "exp", "main"]
    zoe, bob = g.get("Person", "Zoe", branch="main"), g.get("Person", "Bob", branch="main")
    assert zoe is not None and bob is not None and bob["age"] == 41  # merged, then theirs
    head = g.head("main")
    assert head.message == "merge exp into main" and len(head.parents) == 2
    assert g.get("Company", "Hooli", branch="dev") is None  # merging leaves the source


def test_examples_are_generated_from_the_demo_data() -> None:
    for name, text in demo_data.example_files().items():
        assert (EXAMPLES / name).read_text(encoding="utf-8") == text, (
            f"examples/{name} is stale: run `python -m graphlake.cli.demo_data examples`"
        )


def test_optimize_keeps_content(graph: Path) -> None:
    before = as_json("show", graph, "Person", "--limit", "0", "--json")
    first = as_json("optimize", graph, "--json")
    again = as_json("optimize", graph, "--json")
    after = as_json("show", graph, "Person", "--limit", "0", "--json")
    assert sorted(before, key=lambda r: r["name"]) == sorted(after, key=lambda r: r["name"])
    assert again["changed"] is False and again["commit"] == first["commit"]
    assert "nothing to optimize" in ok("optimize", graph)
