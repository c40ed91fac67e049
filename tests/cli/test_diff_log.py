"""`graphlake diff` (values, endpoints, paging), load's change counts, and `graphlake log`
with `--graph` and `--stat`, run as real subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from tests.cli.helpers import RECORDS, SCHEMA, parsed, run_all, stdout, write_jsonl


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A loaded graph; `dev` updates Bob, inserts Dan and an edge, deletes Alice->Bob."""
    root = tmp_path / "graph"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        for record in RECORDS:
            if "type" in record:
                w.insert(record["type"], [record["data"]])
        w.insert("Knows", [{"id": "k1", "src": "Alice", "dst": "Bob", "since": "2020-05-01"}])
    g.create_branch("dev")
    with g.write("dev", message="dev work") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
        w.insert("Person", [{"name": "Dan"}, {"name": "Eve"}, {"name": "Fay"}])
        w.insert("Knows", [{"id": "k2", "src": "Carol", "dst": "Dan"}])
        w.delete("Knows", ["k1"])
    return root


def test_diff_shows_old_new_values_endpoints_and_pages(root: Path) -> None:
    text, paged, as_dict = run_all(
        ("diff", root, "main", "dev"),
        ("diff", root, "main", "dev", "--limit", "1"),
        ("diff", root, "main", "dev", "--json", "--limit", "2"),
    )
    out = stdout(text)
    assert "Person  +3 ~1 -0" in out and "Knows  +1 ~0 -1" in out
    assert "~ Bob: age: 40 → 41" in out
    assert "+ k2 Carol → Dan" in out and "- k1 Alice → Bob: since=2020-05-01" in out
    short = stdout(paged)
    assert "+ Dan" in short and "Eve" not in short and "… 2 more" in short
    person = parsed(as_dict)["Person"]
    assert person["counts"] == {"inserted": 3, "updated": 1, "deleted": 0}
    assert person["inserted"] == ["Dan", "Eve"] and person["truncated"]
    assert person["changes"] == {"Bob": {"age": {"old": 40, "new": 41}}}


def test_load_merge_counts_the_rows_it_updated(root: Path) -> None:
    """A merge load that updates 2 rows changes no row count: it must not read `+0`."""
    source = root.parent / "updates.jsonl"
    write_jsonl(
        source,
        [
            {"type": "Person", "data": {"name": "Alice", "age": 31}},
            {"type": "Person", "data": {"name": "Carol", "age": 5}},
        ],
    )
    summary, text = run_all(
        ("load", root, source, "--mode", "merge", "--json"),
        ("load", root, source, "--mode", "merge", "--branch", "dev"),
    )
    assert parsed(summary)["tables"] == {
        "Person": {"rows": 3, "delta": 0, "inserted": 0, "updated": 2, "deleted": 0},
    }
    assert "+0 ~2 -0" in stdout(text)


def test_log_graph_draws_an_n_way_merge_and_stat_counts_rows(root: Path) -> None:
    g = gl.Graph.open(root)
    for name in ("x", "y"):
        g.create_branch(name)
        with g.write(name, message=f"add {name}") as w:
            w.insert("Person", [{"name": f"P{name}"}])
    merged = g.merge_many(["x", "y"], into="main", message="octopus")
    assert len(g.head("main").parents) == 3, merged
    drawn, as_json_ = run_all(
        ("log", root, "--graph", "--stat"), ("log", root, "--stat", "--json", "--limit", "2")
    )
    lines = stdout(drawn).splitlines()
    assert lines[0].startswith("* ") and "octopus" in lines[0]
    assert lines[1].split() == ["|", "Person", "+2", "~0", "-0"]  # against the first parent
    assert lines[2].rstrip() == "|\\" and lines[3].rstrip() == "| |\\"  # two lanes open
    assert any(line.startswith("| | * ") or line.startswith("| * ") for line in lines)
    assert lines[-1].startswith("* ") and lines[-1].endswith(" init")
    commits = parsed(as_json_)
    assert commits[0]["stat"] == {"Person": {"inserted": 2, "updated": 0, "deleted": 0}}
    assert len(commits) == 2 and "add" in commits[1]["message"]
