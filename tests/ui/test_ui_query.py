"""The web UI's Query page over HTTP: a read session runs openCypher on any revision under
the server's limits; bad queries are a message (line and column), never a 500."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import Server
from tests.ui.harness import TOKENS, config_text, csrf_of
from tests.ui.test_ui_more import seed

MAX_ROWS = 20  # the server's sql_max_rows here: fewer than the 60 Docs


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("ui-query")
    seed(tmp / "graph")
    (tmp / "server.toml").write_text(
        config_text(protected=()) + f"\n[limits]\nsql_max_rows = {MAX_ROWS}\n"
    )
    srv = Server(tmp / "graph", tmp, ["--config", str(tmp / "server.toml")]).start()
    yield srv
    srv.stop()


def run(reader: httpx.Client, q: str, ref: str = "main") -> httpx.Response:
    csrf = csrf_of(reader.get("/ui/query"))
    r = reader.post("/ui/query", data={"csrf": csrf, "ref": ref, "q": q})
    assert r.status_code < 500, r.text
    for token in TOKENS.values():
        assert token not in r.text
    return r


def cells(html: str) -> list[list[str]]:
    body = html.split('id="result"', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_read_session_runs_a_query(reader: httpx.Client) -> None:
    r = run(reader, "MATCH (d:Doc) WHERE d.name < 'd03' RETURN d.name AS name ORDER BY name")
    assert r.status_code == 200
    assert "<th>name</th>" in r.text
    assert cells(r.text) == [["d00"], ["d01"], ["d02"]]
    assert "d.name &lt; &#39;d03&#39;" in r.text  # the query stays in its box, escaped


def test_query_runs_on_the_chosen_revision(reader: httpx.Client) -> None:
    q = "MATCH (d:Doc)-[:Tagged]->(t:Tag) RETURN d.name, t.name"
    assert cells(run(reader, q, ref="sa").text) == [["d01", "t1"]]
    on_main = run(reader, q)  # Tag and Tagged are not on main
    assert on_main.status_code == 400 and "CypherNameError" in on_main.text


def test_syntax_error_names_line_and_column(reader: httpx.Client) -> None:
    r = run(reader, "MATCH (d:Doc)\nRETURN d.name LIMT 3")
    assert r.status_code == 400
    problem = r.text.split('id="problem">', 1)[1].split("</p>", 1)[0]
    assert "CypherSyntaxError" in problem and "line 2, column" in problem


def test_the_servers_row_limit_applies(reader: httpx.Client) -> None:
    r = run(reader, "MATCH (d:Doc) RETURN d.name")
    assert r.status_code == 400 and f"more than {MAX_ROWS} rows" in r.text
    assert len(cells(run(reader, f"MATCH (d:Doc) RETURN d.name LIMIT {MAX_ROWS}").text)) == MAX_ROWS


def test_writes_and_forms_without_csrf_are_refused(reader: httpx.Client) -> None:
    r = run(reader, "CREATE (d:Doc {name: 'x'})")
    assert r.status_code == 400 and "CypherWriteError" in r.text
    r = reader.post("/ui/query", data={"ref": "main", "q": "MATCH (d:Doc) RETURN d"})
    assert r.status_code == 403 and "CsrfError" in r.text
