"""A schema plan that drops values says how many, and a drop plus an add of one type in
one table is flagged as a likely rename with the `@renamed_from` that keeps the values
(issue 23 item 5; Python, --json and the CLI's plan output). Applying such a plan needs
`allow_drop=True` / `--allow-drop` / HTTP `allow_drop`; without it nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import SchemaDropError
from tests.cli.helpers import parsed, run, run_all

PG = """
node Person { name: String @key  nick: String? }
edge Knows: Person -> Person { since: Date? }
"""
RENAMED = """
node Person { name: String @key  nick: String? }
edge Knows: Person -> Person { met: Date? }
"""


def graph(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(str(tmp_path / "g"), PG)
    with g.write() as w:
        w.insert("Person", [{"name": f"p{i}"} for i in range(6)])
        w.insert(
            "Knows",
            [
                {"src": f"p{i}", "dst": f"p{i + 1}", "since": "2020-01-0" + str(i + 1)}
                for i in range(5)
            ],
        )
        w.insert("Knows", [{"src": "p0", "dst": "p5"}])  # no value: nothing to lose
    return g


def test_a_plan_counts_dropped_values_and_suggests_renamed_from(tmp_path: Path) -> None:
    g = graph(tmp_path)
    plan = g.apply_schema(RENAMED, dry_run=True)
    assert [s.kind for s in plan.steps] == ["drop_property", "add_property"]
    assert plan.dropped_values == {"Knows.since": 5}
    [hint] = plan.suggestions
    assert "@renamed_from(since)" in hint and "Knows.met" in hint and "5 values" in hint
    no_nick = PG.replace("  nick: String?", "")
    assert g.apply_schema(no_nick, dry_run=True).dropped_values == {"Person.nick": 0}
    (tmp_path / "r.pg").write_text(RENAMED)
    text, js = run_all(
        ("schema", "plan", g.uri, tmp_path / "r.pg"),
        ("schema", "plan", g.uri, tmp_path / "r.pg", "--json"),
    )
    assert "this plan drops 5 values of Knows.since" in text.stdout
    assert "@renamed_from(since)" in text.stdout
    assert parsed(js)["dropped_values"] == {"Knows.since": 5}


def test_a_plan_that_drops_values_needs_allow_drop(tmp_path: Path) -> None:
    g = graph(tmp_path)
    head = g.head().id
    with pytest.raises(SchemaDropError) as e:
        g.apply_schema(RENAMED)
    assert "5 values of Knows.since" in str(e.value) and "allow_drop=True" in str(e.value)
    assert "@renamed_from(since)" in str(e.value)
    assert g.head().id == head  # nothing was published
    no_type = "node Person { name: String @key  nick: String? }"
    with pytest.raises(SchemaDropError, match="6 rows of Knows"):
        g.apply_schema(no_type)
    assert g.head().id == head
    # A drop of a property that holds no value loses nothing: no flag needed.
    plan = g.apply_schema(PG.replace("  nick: String?", ""))
    assert plan.commit is not None and plan.dropped_values == {"Person.nick": 0}
    plan = g.apply_schema(RENAMED.replace("  nick: String?", ""), allow_drop=True)
    assert plan.commit is not None and plan.dropped_values == {"Knows.since": 5}


def test_applying_reports_what_it_dropped(tmp_path: Path) -> None:
    g = graph(tmp_path)
    (tmp_path / "r.pg").write_text(RENAMED)
    refused = run("schema", "apply", g.uri, tmp_path / "r.pg")
    assert refused.returncode != 0
    assert "5 values of Knows.since" in refused.stderr and "--allow-drop" in refused.stderr
    assert "Traceback" not in refused.stderr
    out = run("schema", "apply", g.uri, tmp_path / "r.pg", "--allow-drop")
    assert out.returncode == 0, out.stderr
    assert "this plan dropped 5 values of Knows.since" in out.stdout
