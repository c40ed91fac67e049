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
WRITE_TOKEN = "ui-write-token-9c3f2b"  # named "author": it opens merge requests
APPROVE_TOKEN = "ui-approve-token-47b0e1"  # a second writer, "approver"
ADMIN_TOKEN = "ui-admin-token-e2a7c4"
DEV_TOKEN = "ui-dev-token-61f9d0"  # may change only branches "dev/*"
TOKENS = {
    "read": READ_TOKEN,
    "write": WRITE_TOKEN,
    "approve": APPROVE_TOKEN,
    "admin": ADMIN_TOKEN,
    "dev": DEV_TOKEN,
}
# (name, token, scope, branch patterns) of the config's [[tokens]]
ENTRIES = (
    ("reader", READ_TOKEN, "read", None),
    ("author", WRITE_TOKEN, "write", None),
    ("approver", APPROVE_TOKEN, "write", None),
    ("admin", ADMIN_TOKEN, "admin", None),
    ("dev-bot", DEV_TOKEN, "write", ["dev/*"]),
)
# Merges into `release` need one approval and go through a merge request; requests into
# `checked` merge only when the merged result passes its data checks.
RULES = (
    '[branches."release"]\nrequired_approvals = 1\nmerge_only_via_request = true\n\n'
    '[branches."checked"]\nrequire_checks = true\n'
)


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
    for name, token, scope, branches in ENTRIES:
        lines += ["[[tokens]]", f'name = "{name}"', f'token = "{token}"', f'scope = "{scope}"']
        if branches:
            lines.append("branches = [" + ", ".join(f'"{b}"' for b in branches) + "]")
        lines.append("")
    return "\n".join(lines) + RULES


def add_wide_conflict(root: Path, dims: int = 128) -> None:
    """Branch `wide` and `main` both change Alice's long `bio` and her `embedding`
    (a Vector(dims)): a conflict whose rows are wide, as real ones are."""
    import graphlake as gl

    g = gl.Graph.open(root)
    more = f"\n  bio: String?\n  embedding: Vector({dims})?"
    wide = SCHEMA.replace("city: String? @search", "city: String? @search" + more)
    g.apply_schema(wide, branch="main", message="bio and embedding")

    def vector(x: float) -> list[float]:
        return [round(x + i / 1000, 3) for i in range(dims)]

    def bio(word: str) -> str:
        return (word * 60)[:400]  # one long word: only a cell that wraps anywhere fits

    with g.write("main", message="main: bios") as w:
        w.update("Person", [{"name": "Bob", "bio": bio("bob"), "embedding": vector(0.1)}])
    g.create_branch("wide", from_="main")
    with g.write("wide", message="wide: Alice's bio") as w:
        w.update("Person", [{"name": "Alice", "bio": bio("wide"), "embedding": vector(0.2)}])
    with g.write("main", message="main: Alice's bio") as w:
        w.update("Person", [{"name": "Alice", "bio": bio("main"), "embedding": vector(0.3)}])


def start_server(tmp: Path, *args: str, wide: bool = False) -> Server:
    """Seed the graph under `tmp` and serve it (the tokens of ENTRIES, `main`
    protected); `wide` adds `add_wide_conflict`; `args` go to `graphlake serve`."""
    seed(tmp / "graph")
    if wide:
        add_wide_conflict(tmp / "graph")
    config = tmp / "server.toml"
    config.write_text(config_text())
    return Server(tmp / "graph", tmp, ["--config", str(config), *args]).start()
