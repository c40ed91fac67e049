"""One social graph for the query tests, loaded once per module (it is read-only)."""

from __future__ import annotations

import pytest

import graphlake as gl
from tests.query.social import SCHEMA, social_rows


def load_social(uri: str) -> gl.Graph:
    g = gl.Graph.init(uri, SCHEMA)
    rows = social_rows()
    with g.write(message="social graph") as w:
        for table in ("Person", "Company", "Knows", "Follows", "WorksAt"):
            w.insert(table, rows[table])
    return g


@pytest.fixture(scope="module")
def social(tmp_path_factory) -> gl.Graph:
    return load_social(str(tmp_path_factory.mktemp("social") / "g"))
