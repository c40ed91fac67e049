"""Templates rendered directly: states a seeded graph does not reach cheaply."""

from __future__ import annotations

import re

from graphlake.server.ui.render import environment


def test_a_running_ingest_page_refreshes_itself() -> None:
    run = {
        "run_id": "r",
        "state": "running",
        "into": "main",
        "base": "0" * 40,
        "done": 1,
        "total": 2,
        "unit": "rows",
        "heartbeat": None,
        "error": None,
        "progress": [],
        "result": None,
    }
    html = (
        environment()
        .get_template("ingest_run.html")
        .render(run=run, refresh=2, session=None, path="/ui/ingest/r")
    )
    assert '<meta http-equiv="refresh" content="2">' in html


def test_diff_page_lists_schema_steps_first() -> None:
    # Diffs across schemas (issue 13) carry `schema_changes`; the page lists them.
    html = (
        environment()
        .get_template("diff.html")
        .render(
            a="main",
            b="dev",
            base="a" * 40,
            end="b" * 40,
            tables={},
            limit=50,
            cap=100,
            steps=[("add property Person.nick: String?", "metadata")],
            session=None,
            path="/ui/diff",
        )
    )
    section = html[html.index('id="schema-changes"') :]
    assert "add property Person.nick: String?" in section and "metadata" in section
    assert html.index('id="schema-changes"') < html.index('id="no-changes"')


def test_branches_page_offers_merge_only_where_there_is_something_to_merge() -> None:
    head = {"id": "c" * 40, "time": "2026-01-01T00:00:00", "message": "m"}
    rows = [
        {"name": n, "head": head, "ahead": ahead, "behind": "0", "protected": False}
        for n, ahead in (("done", "0"), ("main", None), ("work", "2"))
    ]
    html = (
        environment()
        .get_template("branches.html")
        .render(
            rows=rows,
            default="main",
            offset=0,
            more=False,
            per_page=50,
            session=None,
            path="/ui/branches",
        )
    )
    cells = dict(re.findall(r'<tr data-branch="([^"]+)">(.*?)</tr>', html, re.S))
    assert "Merge…" in cells["work"] and "Compare" in cells["work"]
    assert "Merge…" not in cells["done"] and "Compare" in cells["done"]


def test_a_merge_many_conflict_shows_each_side_under_its_name() -> None:
    conflict = {
        "kind": "divergent_update",
        "table": "Person",
        "entity_id": "Ann",
        "message": "age changed by mm-b and mm-a",
        "properties": ["age"],
        "base": {"id": "Ann", "age": 30, "city": "Oslo"},
        "source": {"id": "Ann", "age": 32, "city": "Oslo"},
        "target": {"id": "Ann", "age": 30, "city": "Oslo"},
        "sides": ["mm-b", "mm-a"],
        "between_sources": True,
        "rows": {
            "mm-b": {"id": "Ann", "age": 32, "city": "Oslo"},
            "mm-a": {"id": "Ann", "age": 31, "city": "Oslo"},
        },
    }
    template = environment().from_string(
        '{% from "_conflict.html" import conflict %}{{ conflict(c, "mm-b", "main") }}'
    )
    html = template.render(c=conflict)
    assert re.findall(r"<th>(.*?)</th>", html) == ["base", "mm-b", "mm-a", "target (main)"]
    hot = html.split('<tr class="hot" data-property="age">', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<td>(\d+)</td>", hot) == ["30", "32", "31", "30"]


def test_long_lists_are_abbreviated_in_little_room() -> None:
    from graphlake.server.ui.render import brief

    assert brief([0.5] * 128) == "[0.5, 0.5, … (128)]"
    assert brief([1, 2, 3]) == "[1, 2, 3]"
    assert brief("x" * 100) == "x" * 80 + "…"
