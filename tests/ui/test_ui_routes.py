"""The web UI's routes over HTTP (no browser): login, sessions, CSRF, scopes, pages."""

from __future__ import annotations

import html
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.harness import Server
from tests.ui.harness import READ_TOKEN, TOKENS, WRITE_TOKEN, csrf_of, login, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("ui-routes"))
    yield srv
    srv.stop()


def head(server: Server, branch: str) -> str:
    with server.client(READ_TOKEN) as api:
        return next(
            b["head"] for b in api.get("/branches").json()["branches"] if b["name"] == branch
        )


def test_root_and_pages_need_a_login(server: Server) -> None:
    with server.client() as anon:
        r = anon.get("/", follow_redirects=True)
        assert r.url.path == "/ui/login" and "Log in" in r.text
        r = anon.get("/ui/history?ref=main", follow_redirects=False)
        assert r.status_code == 303
        assert r.headers["location"] == "/ui/login?next=%2Fui%2Fhistory%3Fref%3Dmain"


def test_login_sets_an_httponly_strict_session_cookie_not_the_token(server: Server) -> None:
    with server.client() as c:
        form = c.get("/ui/login")
        r = c.post(
            "/ui/login", data={"csrf": csrf_of(form), "token": WRITE_TOKEN}, follow_redirects=False
        )
        assert r.status_code == 303
        cookie = next(
            v for v in r.headers.get_list("set-cookie") if v.startswith("graphlake_session=")
        )
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
        assert "Secure" not in cookie  # plain http on loopback: a Secure cookie would be lost
        assert WRITE_TOKEN not in cookie


def test_forwarded_headers_are_not_trusted_without_behind_proxy(server: Server) -> None:
    # Without --behind-proxy any local client could claim https (or another address).
    with server.client() as c:
        form = c.get("/ui/login", headers={"X-Forwarded-Proto": "https"})
        login_cookie = next(
            v for v in form.headers.get_list("set-cookie") if v.startswith("graphlake_login=")
        )
        assert "Secure" not in login_cookie


def test_session_cookie_is_secure_behind_a_tls_proxy(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # With --behind-proxy, uvicorn trusts X-Forwarded-Proto from 127.0.0.1, where the TLS
    # proxy sits.
    server = start_server(tmp_path_factory.mktemp("ui-proxy"), "--behind-proxy")
    try:
        with server.client() as c:
            tls = {"X-Forwarded-Proto": "https"}
            form = c.get("/ui/login", headers=tls)
            login_cookie = next(
                v for v in form.headers.get_list("set-cookie") if v.startswith("graphlake_login=")
            )
            assert "Secure" in login_cookie
            # httpx sends no Secure cookie to an http:// URL; send it as a browser on https.
            nonce = login_cookie.split(";")[0].split("=", 1)[1]
            c.cookies.clear()
            r = c.post(
                "/ui/login",
                data={"csrf": csrf_of(form), "token": WRITE_TOKEN},
                headers={**tls, "Cookie": f"graphlake_login={nonce}"},
                follow_redirects=False,
            )
            assert r.status_code == 303
            cookie = next(
                v for v in r.headers.get_list("set-cookie") if v.startswith("graphlake_session=")
            )
            assert "Secure" in cookie
    finally:
        server.stop()


def test_login_refuses_an_unknown_token_without_echoing_it(server: Server) -> None:
    with server.client() as c:
        form = c.get("/ui/login")
        r = c.post("/ui/login", data={"csrf": csrf_of(form), "token": "guess-123456"})
        assert r.status_code == 401 and "unknown token" in r.text
        assert "guess-123456" not in r.text
        assert "graphlake_session" not in c.cookies


def test_login_form_without_its_csrf_cookie_is_refused(server: Server) -> None:
    # A form posted from another site carries no login cookie (SameSite=Strict).
    with server.client() as c:
        r = c.post("/ui/login", data={"csrf": "x" * 43, "token": WRITE_TOKEN})
        assert r.status_code == 403 and "graphlake_session" not in c.cookies


def test_session_cookie_does_not_authenticate_the_json_api(writer: httpx.Client) -> None:
    # Cookies ride along with cross-site requests; the API must keep wanting a bearer
    # token, or any page could merge through it without a CSRF token.
    before = writer.cookies.get("graphlake_session")
    assert before
    r = writer.post("/merge", json={"source": "clean", "into": "main", "dry_run": True})
    assert r.status_code == 401
    assert writer.get("/branches").status_code == 401


PAGES = [
    "/ui/branches",
    "/ui/history",
    "/ui/history?ref=feature&offset=1",
    "/ui/history?ref=main...feature",
    "/ui/diff",
    "/ui/diff?a=main...feature",
    "/ui/diff?a=main&b=feature",
    "/ui/merge",
    "/ui/merge?source=feature&into=main",
    "/ui/browse",
    "/ui/browse?table=Knows",
    "/ui/node?table=Person&id=Alice",
    "/ui/ingest",
]


@pytest.mark.parametrize("scope", ["read", "write"])
def test_every_page_renders_and_never_holds_a_token(
    scope: str, reader: httpx.Client, writer: httpx.Client
) -> None:
    client = reader if scope == "read" else writer
    for page in PAGES:
        r = client.get(page)
        assert r.status_code == 200, (page, r.text)
        assert r.headers["content-type"].startswith("text/html")
        assert r.headers["cache-control"] == "no-store"
        # No script runs, and no other site may frame a page (clickjacking a Merge).
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
        assert "script-src" not in r.headers["content-security-policy"]  # default 'none'
        assert r.headers["x-frame-options"] == "DENY"
        assert "<script" not in r.text
        for token in TOKENS.values():
            assert token not in r.text, page


def test_history_draws_lanes_and_pages(writer: httpx.Client) -> None:
    r = writer.get("/ui/history?ref=feature")
    assert r.text.count('class="row"') == 3  # init, seed, feature's commit
    assert "<svg" in r.text and r.text.count("<circle") == 3
    r = writer.get("/ui/history?ref=feature&offset=1")
    assert r.text.count('class="row"') == 2 and "newer" in r.text


def test_history_counts_changed_rows_per_table(reader: httpx.Client) -> None:
    r = reader.get("/ui/history?ref=feature")
    row = re.search(r'<li class="row"[^>]*>(.*?)</li>', r.text, re.S)  # the newest
    assert row is not None and "Carol joins" in row.group(1)
    text = re.sub(r"<[^>]+>", "", row.group(1))
    assert "Person +1 ~1 −0" in text and "Knows +1 ~0 −0" in text


def test_diff_shows_old_and_new_values_and_edge_endpoints(reader: httpx.Client) -> None:
    r = reader.get("/ui/diff?a=main...feature")
    assert "<del>30</del> → <ins>31</ins>" in r.text  # Alice's age since the merge base
    assert "Carol → Alice" in r.text  # the new Knows edge, by its endpoints
    # From the first commit: three Persons inserted, one a page.
    r = reader.get("/ui/diff?a=feature~2&b=feature&limit=1")
    person = re.search(r'data-table="Person">(.*?)</section>', r.text, re.S)
    assert person is not None and "+3" in person.group(1)
    assert person.group(1).count('class="inserted"') == 1
    assert "show more" in person.group(1)


def test_merge_preview_lists_the_conflict_side_by_side(reader: httpx.Client) -> None:
    r = reader.get("/ui/merge?source=feature&into=main")
    assert "Outcome: <b>conflict</b>" in r.text
    section = re.search(
        r'<section class="conflict"[^>]*data-key="Alice">(.*?)</section>', r.text, re.S
    )
    assert section is not None
    header = re.findall(r"<th>(.*?)</th>", section.group(1))
    assert header == ["base", "source (feature)", "target (main)"]
    # The conflicting property first, its three values in a row; the others folded.
    hot = re.search(r'<tr class="hot" data-property="age">(.*?)</tr>', section.group(1), re.S)
    assert hot is not None and re.findall(r"<td>(\d+)</td>", hot.group(1)) == ["30", "31", "32"]
    folded = section.group(1).split("<details", 1)[1]
    assert 'data-property="city"' in folded and "Oslo" in folded
    assert 'data-property="age"' not in folded


def test_diff_header_names_the_branches_asked_for(
    reader: httpx.Client, writer: httpx.Client
) -> None:
    header = re.search(
        r'id="diff-header">(.*?)</p>', reader.get("/ui/diff?a=main...feature").text, re.S
    )
    assert header is not None
    assert "Changes on <code>feature</code> since its merge base with <code>main</code>" in (
        header.group(1)
    )
    two = reader.get("/ui/diff", params={"a": "main", "b": "feature"}).text
    assert "Changes from <code>main</code> to <code>feature</code>" in two
    # A writer comparing branches may propose the merge; a reader may not.
    compare = writer.get("/ui/diff?a=main...feature").text
    assert 'id="open-mr" href="/ui/mr/new?source=feature&amp;into=main"' in compare
    assert 'id="open-mr"' not in reader.get("/ui/diff?a=main...feature").text
    # "show more" of a range keeps the range (and no empty `b`).
    capped = reader.get("/ui/diff", params={"a": "feature~2...feature", "limit": 1}).text
    more = re.search(r'<a href="(\?[^"]*)">show more</a>', capped)
    assert more is not None and "b=" not in more.group(1)
    wider = reader.get("/ui/diff" + html.unescape(more.group(1)))
    assert wider.status_code == 200
    assert wider.text.count('class="inserted"') == 3 + 2  # people, edges


def test_commit_page_lists_the_changed_rows(server: Server, reader: httpx.Client) -> None:
    page = reader.get(f"/ui/commit/{head(server, 'feature')}").text
    changes = page.split('id="changes"', 1)[1]
    person = changes.split('data-table="Person"', 1)[1].split("</section>", 1)[0]
    assert re.search(r"<b>age</b> <del>30</del> → <ins>31</ins>", person)
    assert "Carol" in person.split('class="inserted"', 1)[1]
    assert "Carol → Alice" in changes.split('data-table="Knows"', 1)[1]
    # Capped per kind of change (the seed inserted two people): a link to more.
    capped = reader.get("/ui/commit/feature~1?limit=1").text
    person = capped.split('data-table="Person"', 1)[1].split("</section>", 1)[0]
    assert person.count('class="inserted"') == 1 and "+2" in person
    assert "Showing at most 1 rows of each kind" in person and "limit=4" in person


def test_read_session_has_no_merge_button_and_its_post_is_refused(
    server: Server, reader: httpx.Client
) -> None:
    page = reader.get("/ui/merge?source=clean&into=main")
    assert 'id="merge-button"' not in page.text and "needs a write token" in page.text
    before = head(server, "main")
    r = reader.post(
        "/ui/merge", data={"csrf": csrf_of(page), "source": "clean", "into": "main", "strategy": ""}
    )
    assert r.status_code == 403
    assert head(server, "main") == before


def test_merge_form_without_the_csrf_token_is_refused(server: Server, writer: httpx.Client) -> None:
    before = head(server, "main")
    r = writer.post("/ui/merge", data={"source": "clean", "into": "main", "strategy": ""})
    assert r.status_code == 403 and "CSRF" in r.text
    r = writer.post(
        "/ui/merge", data={"csrf": "forged", "source": "clean", "into": "main", "strategy": ""}
    )
    assert r.status_code == 403
    assert head(server, "main") == before


def _raw_form_head(server: Server, path: str, cookie: str | None) -> bytes:
    """Send only the head of a form POST declaring a body; the server's reply (b"" if it
    sat waiting for the body)."""
    host, port = server.url.removeprefix("http://").split(":")
    head_ = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        + (f"Cookie: graphlake_session={cookie}\r\n" if cookie else "")
        + "Content-Length: 10000\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(head_.encode())
        try:
            return s.recv(4096)
        except TimeoutError:
            return b""


def test_form_post_is_refused_before_its_body_is_read(server: Server, reader: httpx.Client) -> None:
    before = head(server, "main")
    for path in ("/ui/merge", "/ui/logout"):
        assert _raw_form_head(server, path, None).startswith(b"HTTP/1.1 401")
        assert _raw_form_head(server, path, "forged-session-id").startswith(b"HTTP/1.1 401")
    session = reader.cookies.get("graphlake_session")
    assert _raw_form_head(server, "/ui/merge", session).startswith(b"HTTP/1.1 403")
    assert head(server, "main") == before


def test_oversized_form_is_refused(writer: httpx.Client) -> None:
    page = writer.get("/ui/merge?source=clean&into=main")
    r = writer.post(
        "/ui/merge",
        data={"csrf": csrf_of(page), "source": "clean", "into": "main", "message": "m" * 20_000},
    )
    assert r.status_code == 413


def test_bad_input_gets_an_error_page(reader: httpx.Client) -> None:
    r = reader.get("/ui/browse?table=Person&where=age >>> 3")
    assert r.status_code == 400 and "QueryError" in r.text
    assert 'value="age &gt;&gt;&gt; 3"' in r.text  # the form stays, to be corrected
    r = reader.get("/ui/browse?table=Person&columns=id,shoe_size")
    assert r.status_code == 422 and "UnknownPropertyError" in r.text
    assert reader.get("/ui/browse?table=Nope").status_code == 404
    r = reader.get("/ui/history?ref=no-such-branch")
    assert r.status_code == 404 and "text/html" in r.headers["content-type"]
    r = reader.get("/ui/merge?source=nope&into=main")
    assert r.status_code == 404


def test_browse_filters_chooses_columns_and_pages(reader: httpx.Client) -> None:
    r = reader.get("/ui/browse?ref=feature&table=Person&where=age >= 30&columns=id,age")
    table = re.search(r'<table class="list" id="rows">(.*?)</table>', r.text, re.S)
    assert table is not None
    assert re.findall(r"<th>(\w+)</th>", table.group(1)) == ["id", "age"]
    assert "Alice" in table.group(1) and "Bob" in table.group(1)
    assert "Carol" not in table.group(1)  # 25: filtered out


def test_node_page_links_edges_in_and_out(reader: httpx.Client) -> None:
    r = reader.get("/ui/node?ref=feature&table=Person&id=Alice")
    assert "Oslo" in r.text
    assert 'href="/ui/node?ref=feature&amp;table=Person&amp;id=Bob"' in r.text  # out
    assert 'href="/ui/node?ref=feature&amp;table=Person&amp;id=Carol"' in r.text  # in


def test_merge_into_protected_branch_through_the_form(server: Server, writer: httpx.Client) -> None:
    page = writer.get("/ui/merge?source=clean&into=main")
    r = writer.post(
        "/ui/merge",
        data={
            "csrf": csrf_of(page),
            "source": "clean",
            "into": "main",
            "strategy": "",
            "message": "merge clean via the UI",
        },
    )
    assert r.status_code == 200 and "/ui/commit/" in str(r.url)
    assert "Merged clean into main: merged" in r.text
    new_head = head(server, "main")
    assert new_head in str(r.url)
    history = writer.get("/ui/history?ref=main")
    assert f'data-commit="{new_head}" data-parents="2"' in history.text


def test_logout_needs_the_csrf_token_and_ends_the_session(server: Server) -> None:
    c = login(server, READ_TOKEN)
    try:
        page = c.get("/ui/branches")
        assert c.post("/ui/logout", data={"csrf": ""}).status_code == 403
        r = c.post("/ui/logout", data={"csrf": csrf_of(page)}, follow_redirects=False)
        assert r.status_code == 303
        assert c.get("/ui/branches", follow_redirects=False).status_code == 303
    finally:
        c.close()


def test_static_assets_are_served(server: Server) -> None:
    with server.client() as anon:
        r = anon.get("/ui/static/style.css")
        assert r.status_code == 200 and "text/css" in r.headers["content-type"]


def test_templates_and_assets_ship_in_the_package() -> None:
    import graphlake.server.ui as ui

    here = Path(ui.__file__).parent
    assert (here / "templates" / "base.html").is_file()
    assert (here / "static" / "style.css").is_file()


def test_node_key_with_a_quote_is_a_literal_not_a_filter(reader: httpx.Client) -> None:
    r = reader.get("/ui/node", params={"table": "Person", "id": "O'Brien' OR 'a'='a"})
    assert r.status_code == 200 and 'id="missing"' in r.text


def test_ingest_pages_show_a_run_and_its_workers(
    server: Server, writer: httpx.Client, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import graphlake as gl
    from graphlake.ingestion import ingest

    pq.write_table(
        pa.table({"name": [f"i{i}" for i in range(40)]}), tmp_path / "p.parquet", row_group_size=20
    )
    g = gl.Graph.open(server.root)
    g.create_branch("ingested", from_="main")
    ingest(
        g,
        tmp_path / "p.parquet",
        table="Person",
        workers=2,
        commit_every=20,
        into="ingested",
        run_id="ui-run",
        progress=False,
    )
    r = writer.get("/ui/ingest")
    assert "ui-run" in r.text and 'class="state finished"' in r.text
    assert 'http-equiv="refresh"' not in r.text  # nothing running
    r = writer.get("/ui/ingest/ui-run")
    workers = re.search(r'<table class="list" id="workers">(.*?)</table>', r.text, re.S)
    assert workers is not None and workers.group(1).count("<tr>") == 3  # header + 2
    assert g.head("ingested").id in r.text
    assert writer.get("/ui/ingest/no-such-run").status_code == 404


def test_without_auth_every_visitor_gets_an_admin_session(tmp_path: Path) -> None:
    # `graphlake serve --no-auth`: no login form, but forms still carry a CSRF token.
    import warnings

    from graphlake.server.app import create_app
    from graphlake.server.config import ServerConfig
    from tests.ui.harness import seed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # starlette prefers httpx2 (not installed)
        from fastapi.testclient import TestClient
    seed(tmp_path / "g")
    app = create_app(tmp_path / "g", ServerConfig(no_auth=True))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        r = client.get("/ui/login")
        assert r.url.path == "/ui/branches" and "admin" in r.text
        assert "Log out" not in r.text  # there is no login to end
        page = client.get("/ui/merge?source=clean&into=main")
        assert 'id="merge-button"' in page.text
        r = client.post("/ui/merge", data={"source": "clean", "into": "main", "strategy": ""})
        assert r.status_code == 403  # no CSRF token: refused even without auth
        r = client.post(
            "/ui/merge",
            data={"csrf": csrf_of(page), "source": "clean", "into": "main", "strategy": ""},
        )
        assert r.status_code == 200 and "Merged clean into main" in r.text
