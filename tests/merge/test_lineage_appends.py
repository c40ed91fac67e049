"""`storage.lineage` asks Lance's transactions before comparing fragments: a state whose
versions since the other include a delete or an update is not "the other plus new
fragments", so the O(fragments) manifest comparison is skipped (it cost ~85 ms a commit
on a table of 500 fragments, `bench/feed.py`); appends and index builds still go to it."""

from __future__ import annotations

from pathlib import Path

import pytest

import graphlake as gl
from graphlake.storage import lineage

SCHEMA = "node P { name: String @key  n: I32? }"


def _state(g: gl.Graph, branch: str = "main"):  # type: ignore[no-untyped-def]
    return g.head(branch).tables["P"]


def test_an_update_is_not_taken_for_appends(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("P", [{"name": f"p{i}", "n": i} for i in range(20)])
    loaded = _state(g)
    with g.write() as w:
        w.insert("P", [{"name": "q", "n": 1}])
    appended = _state(g)
    with g.write() as w:
        w.update("P", [{"name": "p1", "n": -1}])
    updated = _state(g)
    tables = g.repo.tables
    assert lineage._may_only_append(tables.open(appended), appended.version - loaded.version)
    assert not lineage._may_only_append(tables.open(updated), updated.version - appended.version)
    assert lineage._may_only_append(tables.open(updated), 0)  # unknown: the comparison decides

    def compared(*args: object) -> None:
        raise AssertionError("fragments compared")

    monkeypatch.setattr(lineage, "appended_fragments", compared)
    assert lineage._appended_rows(tables, appended, updated, 10**6) is None
    found = lineage.candidates(tables, appended, updated)
    assert found.keys == {"p1"}
    monkeypatch.undo()
    rows = lineage._appended_rows(tables, loaded, appended, 10**6)
    assert rows is not None and rows.read(["id"])["id"].to_pylist() == ["q"]


@pytest.mark.parametrize("versions", [-1, lineage._MAX_TRANSACTIONS + 1])
def test_out_of_range_counts_leave_it_to_the_comparison(tmp_path: Path, versions: int) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write() as w:
        w.insert("P", [{"name": "a", "n": 1}])
    assert lineage._may_only_append(g.repo.tables.open(_state(g)), versions)
