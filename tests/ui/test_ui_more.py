"""The web UI's schema and search pages over HTTP: the schema at a revision, schema steps
on the commit and diff pages, `[schema]` in history, schema conflicts in the merge
preview, and the search box of a searchable type (read scope; bad input is a message)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.harness import Server
from tests.ui.harness import READ_TOKEN, TOKENS, config_text, csrf_of

SCHEMA = """
node Doc {
  name: String @key
  title: String? @search
  embedding: Vector(3)? @index(metric="l2")
}
node Person { name: String @key }
"""
TAGS = "node Tag { name: String @key }\nedge Tagged: Doc -> Tag\n"
DOCS = 60  # more than one page of search results (50)


def seed(root: Path) -> None:
    import graphlake as gl

    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed docs") as w:
        w.insert(
            "Doc",
            [
                {
                    "name": f"d{i:02}",
                    "embedding": [float(i), 1.0, 0.0],
                    "title": f"lance graph {i}" if i % 2 else f"plain graph {i}",
                }
                for i in range(DOCS)
            ],
        )
        w.insert("Person", [{"name": "Ann"}])
    # Two branches add the same property with different types: a schema conflict; `sa`
    # also adds a type (and an edge type to it), which only its commits have.
    for branch, kind, more in (("sa", "String", TAGS), ("sb", "I64", "")):
        g.create_branch(branch, from_="main")
        g.apply_schema(
            SCHEMA.replace("\n}\nnode Person", f"\n  note: {kind}?\n}}\nnode Person") + more,
            branch=branch,
            message=f"{branch} adds note",
        )
    with g.write("sa", message="sa tags d01") as w:
        w.insert("Tag", [{"name": "t1"}])
        w.insert("Tagged", [{"id": "e1", "src": "d01", "dst": "t1"}])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("ui-more")
    seed(tmp / "graph")
    (tmp / "server.toml").write_text(config_text(protected=()))
    srv = Server(tmp / "graph", tmp, ["--config", str(tmp / "server.toml")]).start()
    yield srv
    srv.stop()


def head(server: Server, branch: str) -> str:
    with server.client(READ_TOKEN) as api:
        return next(
            b["head"] for b in api.get("/branches").json()["branches"] if b["name"] == branch
        )


def ids(html: str, table_id: str) -> list[str]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"id=(d\d\d)\">", body)


def no_token(r: httpx.Response) -> None:
    assert r.status_code < 500, r.text
    for token in TOKENS.values():
        assert token not in r.text


def test_schema_page_shows_the_pg_text_at_any_revision(reader: httpx.Client) -> None:
    r = reader.get("/ui/schema", params={"ref": "sa"})
    assert r.status_code == 200
    text = r.text.split('id="schema-text">', 1)[1].split("</pre>", 1)[0]
    assert "note: String?" in text and "title: String? @search" in text
    assert "changed by this commit" not in r.text  # sa's head wrote rows only
    assert "changed by this commit" in reader.get("/ui/schema?ref=sa~1").text
    main = reader.get("/ui/schema").text
    assert "note:" not in main and "node Doc {" in main and "changed by this commit" not in main
    missing = reader.get("/ui/schema", params={"ref": "nope"})
    assert missing.status_code == 404 and 'id="error"' in missing.text
    no_token(r)


def test_history_marks_schema_commits(reader: httpx.Client) -> None:
    rows = re.findall(r'<li class="row".*?</li>', reader.get("/ui/history?ref=sa").text, re.S)
    marked = ["tag schema" in row for row in rows]
    assert marked == [False, True, False, False]  # tags, "sa adds note", the seed, init


def test_commit_page_lists_the_schema_steps_with_their_cost(
    server: Server, reader: httpx.Client
) -> None:
    r = reader.get(f"/ui/commit/{head(server, 'sa')}~1")
    assert r.status_code == 200
    steps = r.text.split('id="schema-changes"', 1)[1].split("</section>", 1)[0]
    assert "note" in steps and '<span class="tag">metadata</span>' in steps
    seed_commit = reader.get(f"/ui/commit/{head(server, 'main')}").text
    assert 'id="schema-changes"' not in seed_commit


def test_diff_lists_schema_changes_before_rows(reader: httpx.Client) -> None:
    r = reader.get("/ui/diff", params={"a": "main", "b": "sa"})
    assert r.status_code == 200
    assert "note" in r.text.split('id="schema-changes"', 1)[1].split("</section>", 1)[0]


def test_merge_preview_shows_a_schema_conflict_side_by_side(reader: httpx.Client) -> None:
    r = reader.get("/ui/merge", params={"source": "sa", "into": "sb"})
    assert r.status_code == 200
    table = r.text.split('id="schema-conflicts"', 1)[1].split("</table>", 1)[0]
    cells = re.findall(r'<pre class="definition">(.*?)</pre>', table, re.S)
    assert cells == ["(absent)", "note: String?", "note: I64?"]  # base, source, target
    assert "Doc" in table and "added on both sides" in table
    # Data conflicts stay in their own table (none here).
    assert "Conflicts (0)" in r.text


def test_browse_offers_search_only_where_a_type_declares_it(reader: httpx.Client) -> None:
    doc = reader.get("/ui/browse", params={"table": "Doc"}).text
    form = doc.split('id="search-form"', 1)[1].split("</form>", 1)[0]
    assert 'name="text"' in form and 'name="near"' in form
    person = reader.get("/ui/browse", params={"table": "Person"}).text
    assert 'id="search-form"' not in person


def test_read_session_searches_text_with_paging(reader: httpx.Client) -> None:
    r = reader.get("/ui/search", params={"table": "Doc", "text": "graph"})
    assert r.status_code == 200, r.text
    first = ids(r.text, "results")
    assert len(first) == 50 and "<th>_score</th>" in r.text and "<th>embedding</th>" not in r.text
    nxt = re.search(r'id="next" href="\?([^"]+)"', r.text)
    assert nxt
    r2 = reader.get("/ui/search?" + nxt.group(1).replace("&amp;", "&"))
    second = ids(r2.text, "results")
    assert len(second) == DOCS - 50 and not set(first) & set(second)
    assert 'id="next"' not in r2.text
    only = reader.get(
        "/ui/search", params={"table": "Doc", "text": "lance", "where": "name < 'd10'"}
    )
    assert sorted(ids(only.text, "results")) == ["d01", "d03", "d05", "d07", "d09"]
    no_token(r)


def test_similar_to_a_node_ranks_by_distance(reader: httpx.Client) -> None:
    r = reader.get("/ui/search", params={"table": "Doc", "near": "d10"})
    assert r.status_code == 200, r.text
    found = ids(r.text, "results")
    assert "<th>_distance</th>" in r.text and "d10" not in found
    assert found[:2] in (["d09", "d11"], ["d11", "d09"])


@pytest.mark.parametrize(
    ("params", "status", "words"),
    [
        ({"table": "Doc", "near": "nope"}, 422, "KeyNotFoundError"),  # as the API answers
        ({"table": "Doc", "text": "graph", "where": "name <<< 1"}, 400, "QueryError"),
        ({"table": "Person", "text": "Ann"}, 400, "SearchError"),
        ({"table": "Nope", "text": "x"}, 404, "Unknown"),
    ],
)
def test_bad_search_input_is_a_message_not_a_500(
    reader: httpx.Client, params: dict[str, str], status: int, words: str
) -> None:
    r = reader.get("/ui/search", params=params)
    assert r.status_code == status, r.text
    assert words in r.text.split('id="problem">', 1)[1].split("</p>", 1)[0]
    no_token(r)


def test_oversized_search_text_is_refused(reader: httpx.Client) -> None:
    r = reader.get("/ui/search", params={"table": "Doc", "text": "x" * 5000})
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "query.text" in r.text.split('id="error">', 1)[1] and "x" * 5000 not in r.text
    r = reader.get("/ui/search", params={"table": "Doc", "text": "graph", "page": "-1"})
    assert r.status_code == 422 and "query.page" in r.text


def test_browse_and_node_pages_use_the_revisions_schema(reader: httpx.Client) -> None:
    # Tag and Tagged exist on `sa` only: its Browse page lists them, main's does not.
    sa = reader.get("/ui/browse", params={"ref": "sa", "table": "Tag"})
    assert sa.status_code == 200 and "<option selected>Tag</option>" in sa.text
    assert "<option>Tagged</option>" in sa.text
    assert "<option>Tag</option>" not in reader.get("/ui/browse").text
    node = reader.get("/ui/node", params={"ref": "sa", "table": "Doc", "id": "d01"})
    assert node.status_code == 200 and "Tagged" in node.text and "t1" in node.text


def test_a_merge_request_shows_schema_conflicts_as_definitions(writer: httpx.Client) -> None:
    form = writer.get("/ui/mr/new?source=sa&into=sb")
    r = writer.post(
        "/ui/mr/open",
        data={"csrf": csrf_of(form), "source": "sa", "into": "sb", "title": "notes"},
    )
    assert r.status_code == 200 and "/ui/mr/" in str(r.url)
    table = r.text.split('id="schema-conflicts"', 1)[1].split("</table>", 1)[0]
    assert "note: String?" in table and "note: I64?" in table
