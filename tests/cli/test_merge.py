"""`graphlake merge` and `graphlake diff`, run as real subprocesses.

Graphs are set up with the library (fast, in-process); the commands under test run side
by side where they touch different branches. Merge exit codes: 0 merged / fast-forward /
already up to date, 1 conflicts, 2 any other error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from tests.cli.helpers import RECORDS, SCHEMA, error, parsed, run, run_all, stdout

PHASES = ("resolve_base", "discover", "classify", "validate", "publish")


def diverged(root: Path) -> gl.Graph:
    """`dev` and `main` changed different keys since they forked (a clean merge);
    `ahead` is one commit past `behind` (a fast-forward); `main-copy` is main's head."""
    g = gl.Graph.init(root, SCHEMA)
    g.load(RECORDS)
    for name in ("dev", "behind", "ahead"):
        g.create_branch(name)
    with g.write("ahead", message="add Dan") as w:
        w.insert("Person", [{"name": "Dan"}])
    with g.write("dev", message="hire Erin and Frank, Alice turns 31") as w:
        w.insert("Person", [{"name": "Erin", "age": 25}, {"name": "Frank"}])
        w.update("Person", [{"name": "Alice", "age": 31}])
        w.insert("Knows", [{"id": "k-erin", "src": "Erin", "dst": "Alice"}])
    with g.write("main", message="Carol is 50, add Hooli") as w:
        w.update("Person", [{"name": "Carol", "age": 50}])
        w.insert("Company", [{"name": "Hooli"}])
    g.create_branch("main-copy")
    return g


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `diverged` graph: the merge test moves `main` and `behind`, the diff test reads
    `main-copy` and `dev`, which nothing moves."""
    root = tmp_path_factory.mktemp("clean") / "g"
    diverged(root)
    return root


def conflicting(root: Path) -> gl.Graph:
    """`exp` sets Bob's age to 41 while `main` sets it to 42."""
    g = gl.Graph.init(root, SCHEMA)
    g.load(RECORDS)
    g.create_branch("exp")
    for branch, age in (("exp", 41), ("main", 42)):
        with g.write(branch, message=f"Bob is {age}") as w:
            w.update("Person", [{"name": "Bob", "age": age}])
    return g


def test_merge_clean_fast_forward_up_to_date_dry_run_and_errors(clean: Path) -> None:
    g = gl.Graph.open(clean)
    main, dev, ahead = (g.head(b).id for b in ("main", "dev", "ahead"))
    merged, ff, up_to_date, dry, unknown = run_all(
        ("merge", clean, "dev", "--into", "main", "-m", "merge dev", "--json"),
        ("merge", clean, "ahead", "--into", "behind", "--json"),
        ("merge", clean, "behind", "--into", "ahead"),
        ("merge", clean, "dev", "--into", "main-copy", "--dry-run", "--explain"),
        ("merge", clean, "nope", "--into", "main"),
    )
    result = parsed(merged)
    assert result["outcome"] == "merged" and result["base"] is not None
    assert result["routes"] == {
        "Person": "three_way",
        "Company": "no_change",
        "Knows": "pointer_adoption",
        "WorksAt": "no_change",
    }
    person = result["stats"]["Person"]
    assert (person["source_changes"], person["target_changes"]) == (3, 1)
    assert "publish" in result["timings"] and result["conflicts"] == []

    forwarded = parsed(ff)
    assert (forwarded["outcome"], forwarded["commit"]) == ("fast_forward", ahead)
    assert "already up to date" in stdout(up_to_date)

    text = stdout(dry)
    assert "Dry run: dev merges cleanly into main-copy" in text and "nothing changed" in text
    assert "pointer_adoption" in text and "three_way" in text  # the routes table
    assert "discovery probes" in text and "rows scanned" in text and "timings" in text
    assert all(phase in text for phase in PHASES)

    assert "'nope'" in error(unknown, code=2)  # merge: any error but a conflict exits 2

    g = gl.Graph.open(clean)
    head = g.head("main")
    assert head.id == result["commit"] and head.parents == (main, dev)
    assert head.message == "merge dev"
    assert g.head("behind").id == ahead and g.head("main-copy").id == main  # dry run
    people = {p["name"]: p["age"] for p in g.nodes("Person").to_pylist()}
    assert people == {"Alice": 31, "Bob": 40, "Carol": 50, "Erin": 25, "Frank": None}


def test_merge_conflict_exits_1_and_strategy_theirs_resolves(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = conflicting(root)
    before = g.head("main").id
    as_json, as_text, dry = run_all(
        ("merge", root, "exp", "--json"),
        ("merge", root, "exp", "--into", "main"),
        ("merge", root, "exp", "--dry-run", "--json"),
    )
    error(as_json, code=1)
    report = parsed(as_json, code=1)
    assert report["outcome"] == "conflict"
    [conflict] = report["conflicts"]
    assert (conflict["kind"], conflict["table"], conflict["entity_id"]) == (
        "divergent_update",
        "Person",
        "Bob",
    )
    assert conflict["properties"] == ["age"]
    assert (conflict["source"]["age"], conflict["target"]["age"]) == (41, 42)

    assert "1 conflict" in error(as_text, code=1)
    text = as_text.stdout
    assert "Merge of exp into main stopped on 1 conflict" in text
    assert "divergent_update" in text and "Bob" in text and "age: 40 → exp 41 / main 42" in text

    dry_report = parsed(dry, code=1)  # a dry run that finds conflicts also exits 1
    assert (dry_report["outcome"], dry_report["dry_run"]) == ("conflict", True)
    assert dry_report["conflicts"][0]["entity_id"] == "Bob" and dry.stderr == ""
    assert gl.Graph.open(root).head("main").id == before  # nothing was published

    resolved = stdout(run("merge", root, "exp", "--strategy", "theirs"))
    assert "Merged exp into main" in resolved and "resolved conflicts" in resolved
    assert "theirs: exp's values" in resolved
    assert gl.Graph.open(root).get("Person", "Bob")["age"] == 41


def test_diff_lists_inserted_updated_and_deleted_ids(clean: Path) -> None:
    as_json, as_text = run_all(
        ("diff", clean, "main-copy", "dev", "--json"),
        ("diff", clean, "main-copy", "dev", "--limit", "1"),
    )
    ids = {
        t: {k: d[k] for k in ("inserted", "updated", "deleted")} for t, d in parsed(as_json).items()
    }
    assert ids == {
        "Person": {
            "inserted": ["Erin", "Frank"],
            "updated": {"Alice": ["age"], "Carol": ["age"]},
            "deleted": [],
        },
        "Company": {"inserted": [], "updated": {}, "deleted": ["Hooli"]},
        "Knows": {"inserted": ["k-erin"], "updated": {}, "deleted": []},
    }
    text = stdout(as_text)
    assert "diff main-copy → dev" in text
    assert "Person  +2 ~2 -0" in text and "~ Alice: age: 30 → 31" in text
    assert "… 2 more" in text and "Frank" not in text  # --limit 1: one row per kind
    assert "- Hooli" in text and "k-erin Erin → Alice" in text


def test_merge_many_conflict_between_sources_names_each_row(tmp_path: Path) -> None:
    """Issue 23 item 4: the table shows each source's value and the target's; --json
    has `target` (the target's row) and `rows` (each source's under its name)."""
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    g.load(RECORDS)  # Alice is 30 on main
    for name, age in (("mm-a", 31), ("mm-b", 32)):
        g.create_branch(name)
        with g.write(name) as w:
            w.update("Person", [{"name": "Alice", "age": age}])
    table, js = run_all(
        ("merge-many", g.uri, "mm-a", "mm-b"), ("merge-many", g.uri, "mm-a", "mm-b", "--json")
    )
    assert table.returncode == 1 and js.returncode == 1
    assert "age: 30 → mm-b 32 / mm-a 31 / main 30" in table.stdout
    [c] = parsed(js, 1)["conflicts"]
    assert c["target"]["age"] == 30 and c["sides"] == ["mm-b", "mm-a"]
    assert {n: r["age"] for n, r in c["rows"].items()} == {"mm-a": 31, "mm-b": 32}
