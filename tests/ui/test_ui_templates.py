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


def _request_page(preview: dict[str, object]) -> str:
    from graphlake.catalog.reviews import MergeRequest
    from graphlake.review.rules import BranchRules

    mr = MergeRequest(1, "t", "", "dev", "main", "ann", "2026-01-01T00:00:00")
    mr.events = [{"seq": 1, "kind": "opened", "by": "ann", "time": "2026-01-01T00:00:00"}]
    return (
        environment()
        .get_template("mr.html")
        .render(
            mr=mr,
            preview=preview,
            rules=BranchRules(),
            conflicts=[],
            schema_conflicts=[],
            violations=[],
            checks=preview.get("checks"),
            blockers=[],
            rules_hold=True,
            can_write=False,
            is_author=False,
            max_choices=50,
            problem=None,
            chosen={},
            resolve="res:",
            value="val:",
            session=None,
            path="/ui/mr/1",
        )
    )


def test_request_page_shows_data_checks_when_the_preview_has_them() -> None:
    from graphlake.server.ui.pages_reviews import _checks

    base = {"outcome": "merged", "routes": {}, "diff": {}, "approvals": [], "base": None}
    assert 'id="checks"' not in _request_page(base)
    found = [
        {"name": "one_email", "passed": False, "rows": [{"email": "a@x", "n": 2}]},
        {"name": "no_orphans", "passed": True, "rows": []},
    ]
    html = _request_page({**base, "checks": _checks(found)})
    failed = html.split('data-check="one_email"', 1)[1].split("</tr>", 1)[0]
    assert "failed" in failed and "a@x" in failed
    assert "passed" in html.split('data-check="no_orphans"', 1)[1].split("</tr>", 1)[0]
    # A mapping of name -> result is listed too.
    html = _request_page({**base, "checks": _checks({"c": {"passed": True}})})
    assert 'data-check="c"' in html
