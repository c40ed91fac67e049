"""Fixtures: one shared server (tokens read/write/admin, `main` protected) per session."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import (
    ADMIN_TOKEN,
    BODY_LIMIT,
    READ_TOKEN,
    SQL_MAX_ROWS,
    UPLOAD_LIMIT,
    WRITE_TOKEN,
    Server,
    seed,
    unique,
    write_config,
)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    d = tmp_path_factory.mktemp("server")
    seed(d / "graph")
    config = write_config(
        d / "server.toml",
        protected=["main"],
        limits={
            "max_upload_bytes": UPLOAD_LIMIT,
            "max_body_bytes": BODY_LIMIT,
            "sql_max_rows": SQL_MAX_ROWS,
            "sql_timeout_s": 10,
        },
    )
    srv = Server(d / "graph", d, ["--config", str(config)]).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def anon(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


@pytest.fixture(scope="session")
def reader(server: Server) -> Iterator[httpx.Client]:
    with server.client(READ_TOKEN) as c:
        yield c


@pytest.fixture(scope="session")
def writer(server: Server) -> Iterator[httpx.Client]:
    with server.client(WRITE_TOKEN) as c:
        yield c


@pytest.fixture(scope="session")
def admin(server: Server) -> Iterator[httpx.Client]:
    with server.client(ADMIN_TOKEN) as c:
        yield c


@pytest.fixture
def branch(writer: httpx.Client) -> str:
    """A fresh branch off main, for a test to write to."""
    name = unique("t/branch")
    r = writer.post("/branches", json={"name": name, "from": "main"})
    assert r.status_code == 201, r.text
    return name
