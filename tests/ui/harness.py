"""A small graph with a conflict between `main` and `feature`, for the UI tests.

`feature` and `main` both change Alice's age since they forked (a divergent update);
`feature` also adds a Person and a Knows edge, and `clean` changes nothing `main` did,
so it merges cleanly. `main` is protected (it changes only by merge).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.server.harness import Server

SCHEMA = """
node Person {
  name: String @key
  age: I32?
  city: String? @search
}
edge Knows: Person -> Person { since: I32? }
"""

READ_TOKEN = "ui-read-token-5d1e8a"
WRITE_TOKEN = "ui-write-token-9c3f2b"
TOKENS = {"read": READ_TOKEN, "write": WRITE_TOKEN}


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(page: httpx.Response) -> str:
    """The CSRF token of the form on `page`."""
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


def login(server: Server, token: str) -> httpx.Client:
    """A client logged in to the UI with `token` (a session cookie, not the token)."""
    client = httpx.Client(base_url=server.url, follow_redirects=True, timeout=60)
    form = client.get("/ui/login")
    r = client.post(
        "/ui/login", data={"csrf": csrf_of(form), "token": token, "next": "/ui/branches"}
    )
    assert r.status_code == 200 and r.url.path == "/ui/branches", r.text
    return client


def seed(root: Path) -> None:
    import graphlake as gl

    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed people") as w:
        w.insert(
            "Person",
            [
                {"name": "Alice", "age": 30, "city": "Oslo"},
                {"name": "Bob", "age": 40, "city": "Rome"},
            ],
        )
        w.insert("Knows", [{"id": "k1", "src": "Alice", "dst": "Bob", "since": 2020}])
    g.create_branch("feature", from_="main")
    g.create_branch("clean", from_="main")
    with g.write("feature", message="feature: Alice is 31, Carol joins") as w:
        w.update("Person", [{"name": "Alice", "age": 31}])
        w.insert("Person", [{"name": "Carol", "age": 25}])
        w.insert("Knows", [{"id": "k2", "src": "Carol", "dst": "Alice", "since": 2024}])
    with g.write("main", message="main: Alice is 32") as w:
        w.update("Person", [{"name": "Alice", "age": 32}])
    with g.write("clean", message="clean: Bob moves to Paris") as w:
        w.update("Person", [{"name": "Bob", "city": "Paris"}])


def config_text(protected: tuple[str, ...] = ("main",)) -> str:
    lines = [f"protected_branches = {list(protected)!r}".replace("'", '"'), ""]
    for scope, token in TOKENS.items():
        lines += ["[[tokens]]", f'token = "{token}"', f'scope = "{scope}"', ""]
    return "\n".join(lines)


def start_server(tmp: Path, *args: str) -> Server:
    """Seed the graph under `tmp` and serve it (write and read tokens, `main` protected);
    `args` go to `graphlake serve`."""
    seed(tmp / "graph")
    config = tmp / "server.toml"
    config.write_text(config_text())
    return Server(tmp / "graph", tmp, ["--config", str(config), *args]).start()
