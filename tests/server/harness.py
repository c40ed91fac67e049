"""A real `graphlake serve` process on 127.0.0.1 and httpx clients for it.

Start-up costs a second or two (interpreter, Lance, FastAPI), so fixtures share servers
per session or module and tests work on branches of their own.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

HOST = "127.0.0.1"

SCHEMA = """
node Person {
  name: String @key
  age: I32? @range(0..150)
  email: String? @unique
  born: Date?
  embedding: Vector(2)?
  photo: Blob?
}
node Company { name: String @key }
edge Knows: Person -> Person { since: Date? }
edge WorksAt: Person -> Company @card(0..1)
"""

READ_TOKEN = "read-token-7f1c2d9e8b"
WRITE_TOKEN = "write-token-3a5b7c9d1e"
ADMIN_TOKEN = "admin-token-0f2e4d6c8a"
TOKENS = {"read": READ_TOKEN, "write": WRITE_TOKEN, "admin": ADMIN_TOKEN}

# Limits of the shared server (small, so the 413 and row-limit tests are cheap).
UPLOAD_LIMIT = 64 * 1024
BODY_LIMIT = 128 * 1024
SQL_MAX_ROWS = 500

_names = itertools.count()


def unique(prefix: str) -> str:
    """A branch name no other test uses (servers are shared)."""
    return f"{prefix}-{os.getpid()}-{next(_names)}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def serve_command() -> list[str]:
    return [sys.executable, "-m", "graphlake.cli.app", "serve"]


def write_config(
    path: Path, *, protected: Sequence[str] = ("main",), limits: Mapping[str, Any] | None = None
) -> Path:
    """A TOML config with the three test tokens."""
    lines = [f"protected_branches = {json.dumps(list(protected))}", ""]
    for scope, token in TOKENS.items():
        lines += ["[[tokens]]", f'token = "{token}"', f'scope = "{scope}"', ""]
    if limits:
        lines.append("[limits]")
        lines += [f"{k} = {v}" for k, v in limits.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


class Server:
    """`graphlake serve ROOT --port P ...` as a subprocess; its output goes to a log file."""

    def __init__(
        self,
        root: Path,
        log_dir: Path,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ):
        self.root = root
        self.cwd = cwd  # the server's working directory (default: the test's)
        self.log_path = log_dir / f"server-{os.getpid()}-{next(_names)}.log"
        self.args = list(args)
        self.env = dict(os.environ)
        self.env.pop("GRAPHLAKE_TOKENS", None)  # only the tokens a test sets
        self.env.update(env or {})
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, timeout: float = 60.0) -> Server:
        for _ in range(3):  # a free port can be taken between probe and bind
            port = free_port()
            self.url = f"http://{HOST}:{port}"
            with self.log_path.open("ab") as log:
                self.proc = subprocess.Popen(
                    [
                        *serve_command(),
                        str(self.root),
                        "--host",
                        HOST,
                        "--port",
                        str(port),
                        *self.args,
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self.env,
                    cwd=self.cwd,
                )
            if self._wait_healthy(timeout):
                return self
            self.stop()
        raise RuntimeError(f"server did not start; log:\n{self.log()}")

    def _wait_healthy(self, timeout: float) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        return False

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def client(self, token: str | None = None, timeout: float = 60.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)


def seed(root: Path) -> None:
    """Create the graph with a few rows (through the library: setup is not under test)."""
    import graphlake as gl

    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="seed") as w:
        w.insert(
            "Person",
            [
                {
                    "name": "Alice",
                    "age": 30,
                    "email": "alice@x.org",
                    "born": "1994-03-04",
                    "embedding": [0.5, 1.0],
                    "photo": b"\x89PNG\x00\xff",
                },
                {"name": "Bob", "age": 40},
                {"name": "Carol"},
            ],
        )
        w.insert("Company", [{"name": "Acme"}])
        w.insert("Knows", [{"id": "k1", "src": "Alice", "dst": "Bob", "since": "2020-05-01"}])
        w.insert("WorksAt", [{"id": "w1", "src": "Alice", "dst": "Acme"}])


# --- request helpers ------------------------------------------------------------------


def head(client: httpx.Client, branch: str) -> str:
    r = client.get(f"/branches/{branch}/log", params={"limit": 1})
    assert r.status_code == 200, r.text
    return r.json()["commits"][0]["id"]


def rows(client: httpx.Client, branch: str, table: str, **params: object) -> list[dict]:
    r = client.get(f"/branches/{branch}/tables/{table}", params={"limit": 1000, **params})
    assert r.status_code == 200, r.text
    assert r.json()["next_cursor"] is None
    return r.json()["rows"]


def mutate(client: httpx.Client, branch: str, *operations: dict, message: str = "m") -> str:
    r = client.post(
        f"/branches/{branch}/mutations", json={"message": message, "operations": list(operations)}
    )
    assert r.status_code == 200, r.text
    assert r.json()["branch"] == branch
    return r.json()["commit"]
