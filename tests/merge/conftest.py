"""The oracle's graph: one per test module (see `tests/merge/oracle.py`)."""

from __future__ import annotations

import itertools

import pytest

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge.oracle import BASE, World


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    g = gl.Graph.init(tmp_path_factory.mktemp("oracle") / "g", SOCIAL)
    with g.write(message="base") as w:
        for table in ("Person", "Company", "Knows", "WorksAt"):
            w.insert(table, list(BASE[table].values()))
    assert M.rows(g, "main") == BASE
    return World(g, itertools.count())
