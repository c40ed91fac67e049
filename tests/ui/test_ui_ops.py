"""History operations and merge requests from the web UI's forms, over HTTP (no browser):
revert, cherry-pick, tags, reset, branch create / delete, row history and blame, and the
merge request pages. Each goes through the library with the session's token as author
and the HTTP API's rules: scopes, protected branches, the token's branch patterns."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import Server
from tests.ui.harness import (
    ADMIN_TOKEN,
    APPROVE_TOKEN,
    DEV_TOKEN,
    READ_TOKEN,
    csrf_of,
    login,
    start_server,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("ui-ops"))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def admin(server: Server) -> Iterator[httpx.Client]:
    client = login(server, ADMIN_TOKEN)
    yield client
    client.close()


@pytest.fixture(scope="module")
def dev(server: Server) -> Iterator[httpx.Client]:
    client = login(server, DEV_TOKEN)
    yield client
    client.close()


def api(server: Server, path: str) -> object:
    with server.client(READ_TOKEN) as c:
        r = c.get(path)
        assert r.status_code == 200, r.text
        return r.json()


def head(server: Server, branch: str) -> dict[str, object]:
    log = api(server, f"/branches/{branch}/log?limit=1")
    assert isinstance(log, dict)
    return log["commits"][0]


def rows(server: Server, branch: str, key: str) -> list[dict[str, object]]:
    found = api(server, f"/branches/{branch}/tables/Person?where=name%20%3D%20'{key}'")
    assert isinstance(found, dict)
    return found["rows"]


def row(server: Server, branch: str, key: str) -> dict[str, object]:
    (found,) = rows(server, branch, key)
    return found


def post(client: httpx.Client, page: str, action: str, **data: str) -> httpx.Response:
    return client.post(action, data={"csrf": csrf_of(client.get(page)), **data})


def error_of(r: httpx.Response) -> str:
    found = re.search(r'id="error">(.*?)</p>', r.text, re.S)
    assert found, r.text
    return html.unescape(found.group(1))


def test_cherry_pick_and_revert_from_the_commit_page(server: Server, writer: httpx.Client) -> None:
    feature = head(server, "feature")
    page = f"/ui/commit/{feature['id']}"
    r = post(writer, page, "/ui/cherry-pick", rev=str(feature["id"]), branch="clean")
    assert r.status_code == 200 and "Merged cherry-pick of" in r.text, r.text
    picked = head(server, "clean")
    assert picked["author"] == "author" and len(picked["parents"]) == 1  # type: ignore[arg-type]
    assert row(server, "clean", "Carol")["age"] == 25
    assert "Carol" in r.text.split('id="changes"', 1)[1].split('class="inserted"', 1)[1]
    # ... and undone: revert the picked commit on clean.
    r = post(
        writer, f"/ui/commit/{picked['id']}", "/ui/revert", rev=str(picked["id"]), branch="clean"
    )
    assert r.status_code == 200 and "Merged revert of" in r.text
    assert head(server, "clean")["parents"] == [picked["id"]]
    assert "Carol" in r.text.split('id="changes"', 1)[1].split('class="deleted"', 1)[1]
    assert rows(server, "clean", "Carol") == []
    assert head(server, "feature") == feature


def test_a_read_session_gets_no_forms_and_its_posts_are_refused(reader: httpx.Client) -> None:
    page = reader.get("/ui/commit/feature")
    assert 'id="revert-form"' not in page.text and 'id="tag-form"' not in page.text
    for action in ("/ui/revert", "/ui/tags/create", "/ui/reset", "/ui/branches/create"):
        r = reader.post(action, data={"csrf": csrf_of(page), "rev": "main", "name": "x"})
        assert r.status_code == 403, action


def test_tags_are_created_by_writers_and_deleted_by_admins(
    server: Server, writer: httpx.Client, admin: httpx.Client
) -> None:
    seed = api(server, "/branches/main/log")["commits"][-2]["id"]  # type: ignore[index]
    r = post(writer, f"/ui/commit/{seed}", "/ui/tags/create", rev=seed, name="v1", message="one")
    assert r.status_code == 200 and '<span class="tag release">v1</span>' in r.text
    assert "v1" in api(server, "/tags")["tags"][0]["name"]  # type: ignore[index]
    again = post(writer, f"/ui/commit/{seed}", "/ui/tags/create", rev=seed, name="v1")
    assert again.status_code == 409 and "v1" in error_of(again)
    assert 'action="/ui/tags/delete"' not in r.text  # a writer has no delete button
    refused = post(writer, f"/ui/commit/{seed}", "/ui/tags/delete", name="v1")
    assert refused.status_code == 403
    r = post(admin, f"/ui/commit/{seed}", "/ui/tags/delete", name="v1")
    assert r.status_code == 200 and api(server, "/tags") == {"tags": []}


def test_reset_a_branch_and_a_protected_one_needs_admin(
    server: Server, writer: httpx.Client
) -> None:
    before = head(server, "clean")
    r = post(writer, "/ui/branch?name=clean", "/ui/reset", branch="clean", rev="clean~1")
    assert r.status_code == 200 and r.url.path == "/ui/branch"
    assert head(server, "clean")["id"] == before["parents"][0]  # type: ignore[index]
    reflog = r.text.split('id="reflog"', 1)[1].split("</table>", 1)[0]
    assert "reset" in reflog and "author" in reflog
    r = post(writer, "/ui/branch?name=clean", "/ui/reset", branch="clean", rev=str(before["id"]))
    assert head(server, "clean")["id"] == before["id"]  # undone by another reset
    main = head(server, "main")["id"]
    r = post(writer, "/ui/branch?name=main", "/ui/reset", branch="main", rev="main~1")
    assert r.status_code == 403 and "needs the admin scope" in error_of(r)
    assert head(server, "main")["id"] == main


def test_branch_permissions_and_scopes_apply_to_branch_forms(
    server: Server, writer: httpx.Client, admin: httpx.Client, dev: httpx.Client
) -> None:
    r = post(dev, "/ui/branches", "/ui/branches/create", name="dev/x", **{"from": "main"})
    assert r.status_code == 200 and "dev/x" in r.text
    r = post(dev, "/ui/branches", "/ui/branches/create", name="other", **{"from": "main"})
    assert r.status_code == 403 and "'dev/*'" in error_of(r)
    r = post(dev, "/ui/commit/feature", "/ui/revert", rev="feature", branch="feature")
    assert r.status_code == 403 and "'dev/*'" in error_of(r)
    names = [b["name"] for b in api(server, "/branches")["branches"]]  # type: ignore[index]
    assert "other" not in names
    # Deleting a branch needs admin (as DELETE /branches/{name}).
    assert (
        post(writer, "/ui/branch?name=dev/x", "/ui/branches/delete", name="dev/x").status_code
        == 403
    )
    r = post(admin, "/ui/branch?name=dev/x", "/ui/branches/delete", name="dev/x")
    assert r.status_code == 200 and 'data-branch="dev/x"' not in r.text


def test_node_page_shows_row_history_and_blame(writer: httpx.Client) -> None:
    page = writer.get("/ui/node?table=Person&id=Alice&ref=main").text
    history = page.split('id="row-history"', 1)[1].split("</table>", 1)[0]
    assert re.search(r"<b>age</b> <del>30</del> → <ins>32</ins>", history)
    assert "main: Alice is 32" in history and "seed people" in history
    age = page.split('data-property="age"', 1)[1].split("</tr>", 1)[0]
    assert "main: Alice is 32" in age
    city = page.split('data-property="city"', 1)[1].split("</tr>", 1)[0]
    assert "seed people" in city


@pytest.fixture(scope="module")
def approver(server: Server) -> Iterator[httpx.Client]:
    client = login(server, APPROVE_TOKEN)
    yield client
    client.close()


def test_merge_request_lifecycle_with_rules_and_a_typed_resolution(
    server: Server, admin: httpx.Client, writer: httpx.Client, approver: httpx.Client
) -> None:
    # `release` takes merges only through a request, with one approval (harness RULES).
    post(admin, "/ui/branches", "/ui/branches/create", name="release", **{"from": "main"})
    preview = writer.get("/ui/merge?source=feature&into=release").text
    assert 'id="request-only"' in preview and 'id="merge-button"' not in preview
    r = post(writer, "/ui/merge?source=feature&into=release", "/ui/merge", source="feature",
             into="release", strategy="theirs")  # fmt: skip
    assert r.status_code == 403 and "merge_only_via_request" in error_of(r)

    r = post(writer, "/ui/mr/new?source=feature&into=release", "/ui/mr/open", source="feature",
             into="release", title="Alice's age", description="please")  # fmt: skip
    assert r.status_code == 200 and re.search(r"/ui/mr/\d+$", str(r.url)), r.text
    mr = str(r.url).rsplit("/", 1)[1]
    page = r.text
    assert "Outcome: <b>conflict</b>" in page and 'id="own-request"' in page
    assert re.search(r'<button type="submit" id="mr-merge" disabled>', page)
    assert "required_approvals" in page.split('id="blockers"', 1)[1]
    # The author cannot approve (no button, and the post is refused); the approver can.
    r = post(writer, f"/ui/mr/{mr}", f"/ui/mr/{mr}/approve")
    assert r.status_code == 403 and "cannot approve" in error_of(r)
    r = post(approver, f"/ui/mr/{mr}", f"/ui/mr/{mr}/approve")
    assert r.status_code == 200 and "approver" in r.text.split('id="approvals"', 1)[1]
    r = post(approver, f"/ui/mr/{mr}", f"/ui/mr/{mr}/comment", text="age 41, not 31 or 32")
    assert "age 41, not 31 or 32" in r.text.split('id="event-list"', 1)[1]
    page = writer.get(f"/ui/mr/{mr}").text
    assert re.search(r'<button type="submit" id="mr-merge">', page)  # the rules hold

    # Without a choice the conflict blocks: nothing changes, the page says why.
    before = head(server, "release")["id"]
    r = post(writer, f"/ui/mr/{mr}", f"/ui/mr/{mr}/merge", strategy="")
    assert r.status_code == 409 and 'id="problem"' in r.text
    assert head(server, "release")["id"] == before
    # A value typed in for the one conflicting property: JSON, so 41 is a number.
    name = '["Person", "Alice", "age"]'
    r = post(writer, f"/ui/mr/{mr}", f"/ui/mr/{mr}/merge", strategy="",
             **{f"res:{name}": "value", f"val:{name}": "41"})  # fmt: skip
    assert r.status_code == 200 and "/ui/commit/" in str(r.url), r.text
    assert row(server, "release", "Alice")["age"] == 41
    assert row(server, "release", "Carol")["age"] == 25  # the rest merged as usual
    merged = head(server, "release")
    assert merged["author"] == "author" and len(merged["parents"]) == 2  # type: ignore[arg-type]
    page = writer.get(f"/ui/mr/{mr}").text
    assert 'id="mr-state">merged<' in page and merged["id"] in page  # type: ignore[operator]
    kinds = re.findall(r'<li data-kind="(\w+)">', page)
    assert kinds == ["opened", "approved", "commented", "merged"]
    listed = writer.get("/ui/mr?state=merged").text
    assert f'<tr data-id="{mr}">' in listed and "Alice&#39;s age" in listed


def test_a_request_whose_merged_result_fails_a_data_check_cannot_merge(
    server: Server, admin: httpx.Client, writer: httpx.Client
) -> None:
    # `checked` requires passing checks (harness RULES); its check refuses anyone in
    # Paris, which only the merged result has (`clean` moves Bob there, without checks).
    post(admin, "/ui/branches", "/ui/branches/create", name="checked", **{"from": "main"})
    with server.client(ADMIN_TOKEN) as c:
        no_paris = "MATCH (p:Person) WHERE p.city = 'Paris' RETURN p.name"
        r = c.put("/branches/checked/data-checks", json={"checks": {"no_paris": no_paris}})
        assert r.status_code == 200, r.text
    r = post(writer, "/ui/mr/new?source=clean&into=checked", "/ui/mr/open", source="clean",
             into="checked", title="Bob moves")  # fmt: skip
    assert r.status_code == 200 and re.search(r"/ui/mr/\d+$", str(r.url)), r.text
    mr = str(r.url).rsplit("/", 1)[1]
    checks = r.text.split('id="checks"', 1)[1].split("</table>", 1)[0]
    assert 'data-check="no_paris"' in checks and "failed" in checks
    before = head(server, "checked")["id"]
    r = post(writer, f"/ui/mr/{mr}", f"/ui/mr/{mr}/merge", strategy="")
    assert r.status_code == 409 and "no_paris" in r.text.split('id="problem"', 1)[1]
    assert head(server, "checked")["id"] == before
    assert row(server, "checked", "Bob")["city"] == "Rome"


def test_a_closed_request_offers_no_forms(server: Server, writer: httpx.Client) -> None:
    r = post(writer, "/ui/mr/new", "/ui/mr/open", source="clean", into="main", title="Bob")
    mr = str(r.url).rsplit("/", 1)[1]
    assert 'id="mr-merge"' in r.text  # main has no rules: no approval needed
    r = post(writer, f"/ui/mr/{mr}", f"/ui/mr/{mr}/close")
    assert 'id="mr-state">closed<' in r.text and 'id="mr-merge"' not in r.text
    again = post(writer, "/ui/mr", f"/ui/mr/{mr}/merge", strategy="")
    assert again.status_code == 409
    assert writer.get("/ui/mr/99999").status_code == 404
