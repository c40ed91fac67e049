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


def _many(g: gl.Graph, sources: list[str], into: str, **kw: object) -> gl.MergeResult:
    target = g.head(into).id
    r = g.merge_many(sources, into=into, **kw)  # type: ignore[arg-type]
    for name, st in r.stats.items():
        want_source = sum(_changed_in(g, r.base, s, name) for s in sources)
        want_target = _changed_in(g, r.base, target, name)
        assert (st.source_changes, st.target_changes) == (want_source, want_target), (
            name,
            st,
        )
    return r


def _changed_in(g: gl.Graph, a: str, b: str, table: str) -> int:
    d = g.diff(a, b, limit=0).get(table)
    return 0 if d is None else sum(d.counts.values())


def test_merge_many_counts_equal_the_diff_of_each_side_across_schemas(tmp_path: Path) -> None:
    """The fold of sources on different schemas (merge/many_schema.py): each step counts
    only its own sources against its own base; the result counts every source and the
    target against the merge base, as `diff` does."""
    g = gl.Graph.init(str(tmp_path / "g"), PG)
    with g.write() as w:
        w.insert("Paper", [{"name": f"p{i:03d}"} for i in range(N)])
    for b in ("same", "other", "wide"):
        g.create_branch(b)
    with g.write("same") as w:
        w.update("Paper", [{"name": f"p{i:03d}", "year": 2000 + i} for i in range(3)])
    with g.write("other") as w:
        w.update("Paper", [{"name": f"p{i:03d}", "ncited": i} for i in range(10, 14)])
    g.apply_schema(PG_URL, "wide")
    with g.write("wide") as w:
        w.update("Paper", [{"name": f"p{i:03d}", "url": f"u{i}"} for i in range(20, 25)])
    with g.write() as w:  # the target changed rows too
        w.update("Paper", [{"name": "p040", "year": 1999}, {"name": "p041", "year": 1998}])
    dry = _many(g, ["same", "other", "wide"], "main", dry_run=True)
    assert dry.outcome == "merged"
    st = dry.stats["Paper"]
    assert (st.source_changes, st.target_changes) == (3 + 4 + 5, 2)
    real = _many(g, ["same", "other", "wide"], "main")
    assert real.commit is not None
    assert (real.stats["Paper"].source_changes, real.stats["Paper"].target_changes) == (12, 2)
