"""Templates rendered directly: states a seeded graph does not reach cheaply."""

from __future__ import annotations

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
