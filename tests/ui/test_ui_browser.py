"""The web UI in a real browser: headless Chromium (Debian's package) via Playwright.

One server and one browser for the module. The walk: log in, branches, history, diff and
merge preview of a graph with a conflict, merge through the UI, the merge in history.
Also: a read session cannot merge, a forged form is refused, no page leaks a token, and
the pages read (search, query) without JavaScript.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.server.harness import Server
from tests.ui.browser import launch, missing_reason
from tests.ui.harness import APPROVE_TOKEN, READ_TOKEN, TOKENS, WRITE_TOKEN, start_server

_REASON = missing_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"browser tests: {_REASON}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("ui-browser"), wide=True)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


class Visits:
    """Every HTML page a test's browser loads, to check none holds a token."""

    def __init__(self) -> None:
        self.pages: list[tuple[str, str]] = []

    def record(self, page: Any) -> None:
        self.pages.append((page.url, page.content()))


def log_in(browser: Any, server: Server, token: str) -> Any:
    page = browser.new_context(base_url=server.url).new_page()
    page.goto("/ui")
    assert page.url.endswith("/ui/login?next=%2Fui%2Fbranches")
    page.fill("input[name=token]", token)
    page.click("button[type=submit]")
    page.wait_for_url("**/ui/branches")
    return page


def head(server: Server, branch: str) -> str:
    with server.client(READ_TOKEN) as api:
        return next(
            b["head"] for b in api.get("/branches").json()["branches"] if b["name"] == branch
        )


def test_review_and_merge_a_branch_with_a_conflict(browser: Any, server: Server) -> None:
    visits = Visits()
    page = log_in(browser, server, WRITE_TOKEN)
    assert page.locator("h1").inner_text() == "Branches"
    visits.record(page)
    # HttpOnly: no script in the page can read the session cookie.
    assert page.evaluate("document.cookie") == ""
    names = page.locator("#branches tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.branch)"
    )
    assert names == ["clean", "feature", "main", "wide"]

    page.click("tr[data-branch=feature] >> text=feature")  # its history
    page.wait_for_url("**/ui/history?ref=feature")
    page.wait_for_selector("#history li.row >> nth=2")  # drawn (slow on a loaded machine)
    assert page.locator("#history li.row").count() == 3
    assert page.locator("#history svg circle").count() == 3
    visits.record(page)

    page.goto("/ui/branches")
    page.click("tr[data-branch=feature] >> text=Compare")
    page.wait_for_url("**/ui/diff?a=main...feature")
    person = page.locator("section[data-table=Person]")
    assert "30 → 31" in person.locator("tr.updated").inner_text()
    assert "Carol → Alice" in page.locator("section[data-table=Knows]").inner_text()
    visits.record(page)

    page.goto("/ui/branches")
    page.click("tr[data-branch=feature] >> text=Merge…")
    page.wait_for_url("**/ui/merge?source=feature&into=main")
    assert "conflict" in page.locator("#outcome").inner_text()
    alice = page.locator("#conflicts section.conflict[data-key=Alice]")
    assert "divergent_update" in alice.locator("h3").inner_text()
    assert alice.locator("tr.hot[data-property=age] td").all_inner_texts() == ["30", "31", "32"]
    # The other properties are folded: closed until clicked.
    assert not alice.locator("details.rest tr[data-property=city]").is_visible()
    alice.locator("details.rest summary").click()
    assert alice.locator("details.rest tr[data-property=city]").is_visible()
    visits.record(page)

    # Without a strategy the merge stops at the conflict and changes nothing.
    before = head(server, "main")
    page.click("#merge-button")
    assert "conflict" in page.locator("#problem").inner_text().lower()
    assert head(server, "main") == before
    visits.record(page)

    page.check("input[name=strategy][value=theirs]")
    page.fill("input[name=message]", "merge feature (theirs) in the browser")
    page.click("#merge-button")
    page.wait_for_url("**/ui/commit/**")
    assert "Merged feature into main: merged" in page.locator("#merged").inner_text()
    # What the strategy resolved is listed on the result page.
    resolved = page.locator("#resolved tbody tr").all_inner_texts()
    assert len(resolved) == 1 and "Alice" in resolved[0] and "theirs" in resolved[0]
    assert "31" in page.locator("#changes section[data-table=Person]").inner_text()
    merge_id = page.locator("#commit-id").inner_text()
    assert merge_id == head(server, "main")
    visits.record(page)

    page.click("nav >> text=History")
    top = page.locator("#history li.row").first
    assert top.get_attribute("data-commit") == merge_id
    assert top.get_attribute("data-parents") == "2"
    assert "merge feature (theirs) in the browser" in top.inner_text()
    visits.record(page)

    for url, html in visits.pages:
        for token in TOKENS.values():
            assert token not in html, url
    page.context.close()


def test_merge_preview_of_wide_rows_fits_a_1400_px_window(browser: Any, server: Server) -> None:
    page = log_in(browser, server, READ_TOKEN)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto("/ui/merge?source=wide&into=main")
    alice = page.locator("#conflicts section.conflict[data-key=Alice]")
    assert alice.locator("tr.hot").evaluate_all("rows => rows.map(r => r.dataset.property)") == [
        "bio",
        "embedding",
    ]
    vectors = alice.locator("tr.hot[data-property=embedding] td").all_inner_texts()
    assert vectors[1].startswith("[0.2, 0.201, … (128)]"), vectors
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1400, width
    # The target column is on screen: its right edge within the window.
    box = alice.locator("thead th").last.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 1400
    page.context.close()


def test_read_session_cannot_merge(browser: Any, server: Server) -> None:
    page = log_in(browser, server, READ_TOKEN)
    page.goto("/ui/merge?source=clean&into=main")
    assert page.locator("#outcome").count() == 1
    assert page.locator("#merge-button").count() == 0
    assert page.locator("#read-only").is_visible()
    before = head(server, "main")
    # The read session's own CSRF token (from its logout form) does not make it a writer.
    status = page.evaluate("""async () => {
        const csrf = document.querySelector('input[name=csrf]').value;
        const body = new URLSearchParams({csrf, source: 'clean', into: 'main', strategy: ''});
        return (await fetch('/ui/merge', {method: 'POST', body})).status;
    }""")
    assert status == 403
    assert head(server, "main") == before
    page.context.close()


def test_forged_form_without_csrf_token_is_refused(browser: Any, server: Server) -> None:
    page = log_in(browser, server, WRITE_TOKEN)
    before = head(server, "main")
    # A form built in the page, as another site would, lacking the CSRF field.
    page.set_content("""<form id="f" method="post" action="/ui/merge">
        <input name="source" value="clean"><input name="into" value="main">
        <input name="strategy" value=""></form>""")
    with page.expect_navigation():
        page.evaluate("document.getElementById('f').submit()")
    assert "CsrfError" in page.content()
    assert head(server, "main") == before
    page.context.close()


def test_pages_read_without_javascript(browser: Any, server: Server) -> None:
    context = browser.new_context(base_url=server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto("/ui/login")
    page.fill("input[name=token]", READ_TOKEN)
    page.click("button[type=submit]")
    page.goto("/ui/browse?table=Person&where=age%20%3E%3D%2030")
    assert "Alice" in page.locator("#rows").inner_text()
    page.click("#rows >> text=Alice")
    assert "Knows" in page.locator("main").inner_text()
    # A read session searches from the Browse page (Person.city is @search), no script.
    page.goto("/ui/browse?table=Person")
    page.fill("#search-form input[name=text]", "rome")
    page.click("#search-form button")
    assert page.locator("#results th").all_inner_texts()[-1] == "_score"
    assert page.locator("#results tbody tr").all_inner_texts()[0].startswith("Bob")
    # ... and runs a Cypher query (a plain form post).
    page.click("nav >> text=Query")
    page.fill(
        "#query-form textarea[name=q]",
        "MATCH (p:Person) WHERE p.age >= 30 RETURN p.name AS name ORDER BY name",
    )
    page.click("#run-query")
    assert page.locator("#result tbody tr").all_inner_texts() == ["Alice", "Bob"]
    context.close()


def alice(server: Server, branch: str) -> dict[str, Any]:
    with server.client(READ_TOKEN) as api:
        r = api.get(f"/branches/{branch}/tables/Person", params={"where": "name = 'Alice'"})
        return r.json()["rows"][0]


def test_merge_request_lifecycle_with_two_users(browser: Any, server: Server) -> None:
    """The author opens a request of `wide` into `release` (one approval required, merges
    only through requests), the approver approves and comments, the author settles the
    conflict property by property and merges."""
    author = log_in(browser, server, WRITE_TOKEN)
    author.fill("#create-branch-form input[name=name]", "release")
    author.click("#create-branch-form button")
    author.wait_for_url("**/ui/branch?name=release")
    author.goto("/ui/branches")
    author.click("tr[data-branch=wide] >> text=Open merge request")
    author.wait_for_url("**/ui/mr/new?source=wide&into=main")
    author.fill("#mr-open-form input[name=into]", "release")
    author.fill("#mr-open-form input[name=title]", "Alice's new bio")
    author.click("#mr-open")
    author.wait_for_url("**/ui/mr/*")
    url = author.url
    assert author.locator("#mr-author").inner_text() == "author"
    assert author.locator("#mr-merge").is_disabled()  # no approval yet
    assert author.locator("#approve").count() == 0 and author.locator("#own-request").is_visible()

    approver = log_in(browser, server, APPROVE_TOKEN)
    approver.goto(url)
    approver.click("#approve")
    approver.wait_for_url(url)
    assert "approver" in approver.locator("#approvals").inner_text()
    approver.fill("#comment-form textarea", "take wide's bio, keep release's vector")
    approver.click("#comment")
    assert "take wide's bio" in approver.locator("#event-list").inner_text()
    approver.context.close()

    author.goto(url)
    assert author.locator("#mr-merge").is_enabled()
    conflict = author.locator("#conflicts section.conflict[data-key=Alice]")
    choices = conflict.locator("tr.choice")
    assert choices.count() == 2  # bio, embedding
    assert author.evaluate("document.documentElement.scrollWidth") <= 1280  # the window
    choices.nth(0).locator("input[type=radio][value=theirs]").check()
    choices.nth(1).locator("input[type=radio][value=ours]").check()
    before = alice(server, "release")
    author.click("#mr-merge")
    author.wait_for_url("**/ui/commit/**")
    assert "Merged merge request" in author.locator("#merged").inner_text()
    after = alice(server, "release")
    assert after["bio"] == alice(server, "wide")["bio"] != before["bio"]
    assert after["embedding"] == before["embedding"]
    author.goto(url)
    assert author.locator("#mr-state").inner_text() == "merged"
    kinds = author.locator("#event-list li").evaluate_all("items => items.map(i => i.dataset.kind)")
    assert kinds == ["opened", "approved", "commented", "merged"]
    author.context.close()
