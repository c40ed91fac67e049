"""Fixtures for the catalog tests: a real S3-compatible server (moto) on loopback.

The server is one subprocess per test session; every test gets its own key prefix, so
tests never see each other's objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from graphlake.catalog.store import ObjectStore
from tests.s3server import S3Server


@dataclass(frozen=True)
class Root:
    """Where a test's graph root lives; `open()` gives a fresh ObjectStore on it."""

    uri: str
    options: dict[str, str] | None

    def open(self) -> ObjectStore:
        return ObjectStore(self.uri, self.options)


@pytest.fixture(params=["local", pytest.param("s3", marks=pytest.mark.s3)])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Root:
    """A fresh, empty root: a local folder, then an S3 prefix."""
    if request.param == "local":
        return Root(str(tmp_path / "root"), None)
    server: S3Server = request.getfixturevalue("s3_server")
    return Root(server.fresh_uri(), server.options)


@pytest.fixture
def store(root: Root) -> ObjectStore:
    return root.open()
