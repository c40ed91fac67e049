"""The UI tests' logged-in sessions: `reader` and `writer`, one login per module.

Each test module defines its own module-scoped `server`; these fixtures log in to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.server.harness import Server
from tests.ui.harness import READ_TOKEN, WRITE_TOKEN, login


@pytest.fixture(scope="module")
def reader(server: Server) -> Iterator[httpx.Client]:
    client = login(server, READ_TOKEN)
    yield client
    client.close()


@pytest.fixture(scope="module")
def writer(server: Server) -> Iterator[httpx.Client]:
    client = login(server, WRITE_TOKEN)
    yield client
    client.close()
