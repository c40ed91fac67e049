"""Merge statistics equal what `diff` reports for each side (issue 23 item 3), on the
routes that do not discover both sides' rows: a backfill's column route and pointer
adoption, and a schema merge's evolved tables; in Python and the CLI's --json."""

from __future__ import annotations

from pathlib import Path

import graphlake as gl
from tests.cli.helpers import parsed, run

PG = "node Paper { name: String @key  ncited: I32?  year: I32? }"
PG_URL = "node Paper { name: String @key  ncited: I32?  year: I32?  url: String? }"
N = 50


def changed(g: gl.Graph, a: str, b: str) -> int:
    d = g.diff(a, b, limit=0)
    return sum(sum(t.counts.values()) for t in d.values())


def graph(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(str(tmp_path / "g"), PG)
    with g.write() as w:
        w.insert("Paper", [{"name": f"p{i:03d}"} for i in range(N)])
    g.create_branch("bf")
    with g.write("bf") as w:  # backfills every value
        w.set_property("Paper", "ncited", [{"name": f"p{i:03d}", "ncited": i} for i in range(N)])
    g.create_branch("schema")
    g.apply_schema(PG_URL, "schema")
    g.create_branch("moved")
    with g.write("moved") as w:
        w.update("Paper", [{"name": "p001", "year": 2001}, {"name": "p002", "year": 2002}])
    return g


def check(g: gl.Graph, source: str, into: str) -> gl.MergeResult:
    r = g.merge(source, into=into, dry_run=True)
    base = r.base
    st = r.stats["Paper"]
    assert (st.source_changes, st.target_changes) == (
        changed(g, base, source),
        changed(g, base, into),
    ), (source, into, st)
    return r


def test_merge_counts_equal_the_diff_of_each_side(tmp_path: Path) -> None:
    g = graph(tmp_path)
    adopted = check(g, "bf", "schema")  # the target's only change is a schema step
    assert adopted.stats["Paper"].source_changes == N
    column = check(g, "bf", "moved")
    assert column.routes["Paper"] == "column_write"
    assert (column.stats["Paper"].source_changes, column.stats["Paper"].target_changes) == (N, 2)
    evolved = check(g, "schema", "moved")  # a schema merge: main changed rows
    assert evolved.stats["Paper"].target_changes == 2
    out = parsed(run("merge", g.uri, "bf", "--into", "moved", "--dry-run", "--json"))
    assert out["stats"]["Paper"]["source_changes"] == N
    assert out["stats"]["Paper"]["target_changes"] == 2
