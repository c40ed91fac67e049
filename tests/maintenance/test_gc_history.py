"""gc keeps history readable across schema merges: every diff, `log --stat` and
`fsck --deep` answers the same before and after, and a state a gc already damaged gets a
typed error naming the commit (never a KeyError)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import HistoryUnreadableError
from graphlake.merge.diff import commit_stat
from graphlake.storage import lineage

ZERO = dt.timedelta(0)
S1 = "node Company { name: String @key  city: String? }"
S2 = "node Company { name: String @key  city: String?  url: String? }"


def _schema_merged(tmp_path: Path) -> gl.Graph:
    """The issue's repro: a fast-forward, then a schema merge of a backfill."""
    g = gl.Graph.init(str(tmp_path / "g"), S1)
    with g.write("main") as w:
        w.insert("Company", [{"name": "A"}, {"name": "B"}])
    g.create_branch("exp")
    g.create_branch("fb")
    g.apply_schema(S2, "exp")
    with g.write("exp") as w:
        w.set_property("Company", "url", [{"name": "A", "url": "u"}])
    with g.write("fb") as w:
        w.insert("Company", [{"name": "C"}])
    g.merge("fb", "main")
    g.merge("exp", "main")
    return g


def _history(g: gl.Graph) -> dict:
    out = {}
    for c in g.log("main"):
        out[c.id] = commit_stat(g.repo, c)
        for p in c.parents:
            d = g.diff(p, c.id)
            out[(p, c.id)] = (
                [str(s) for s in d.schema_changes],
                {n: t.to_dict() for n, t in d.items()},
            )
    return out


def test_gc_keeps_diffs_and_stats_across_a_schema_merge(tmp_path: Path) -> None:
    g = _schema_merged(tmp_path)
    before = _history(g)
    assert before[(g.resolve("main^1").id, g.head("main").id)][1]["Company"]["counts"] == {
        "inserted": 0,
        "updated": 1,
        "deleted": 0,
    }
    assert g.fsck(deep=True).ok
    g.gc(grace=ZERO, reflog_keep=ZERO)
    assert _history(g) == before
    assert g.fsck(deep=True).ok


def test_walk_diffs_across_layouts_without_lineage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With lineage off, the walk compares states of different layouts (a column only
    one side has) and finds exactly the changed rows."""
    g = _schema_merged(tmp_path)
    before = _history(g)

    def unavailable(*args: object, **kwargs: object) -> None:
        raise lineage.LineageUnavailable(lineage.FallbackReason.HISTORY_CLEANED, "test")

    monkeypatch.setattr(lineage, "candidates", unavailable)
    assert _history(g) == before


def test_a_damaged_state_is_a_typed_error_naming_the_commit(tmp_path: Path) -> None:
    g = _schema_merged(tmp_path)
    head = g.head("main")
    state = head.tables["Company"]
    uri = Path(g.repo.tables.uri(state.table_id))
    branch_dir = uri / "tree" / state.lance_branch if state.lance_branch != "main" else uri
    # Lance names manifests by u64::MAX - version (newest sorts first).
    (branch_dir / "_versions" / f"{2**64 - 1 - state.version}.manifest").unlink()
    g = gl.Graph.open(g.uri)  # no cached dataset
    with pytest.raises(HistoryUnreadableError, match=head.id[:12]):
        g.diff("main^1", head.id)
    report = g.fsck(deep=True)
    assert not report.ok
    assert any(p.check == "diff" and head.id[:12] in p.where for p in report.problems)


def test_cli_fsck_deep_and_diff_name_the_damaged_commit(tmp_path: Path) -> None:
    from tests.cli.helpers import run

    g = _schema_merged(tmp_path)
    head = g.head("main")
    state = head.tables["Company"]
    uri = Path(g.repo.tables.uri(state.table_id))
    (
        uri / "tree" / state.lance_branch / "_versions" / f"{2**64 - 1 - state.version}.manifest"
    ).unlink()
    shallow, deep, diffed = (
        run("fsck", g.uri),
        run("fsck", g.uri, "--deep"),
        run("diff", g.uri, "main^1", "main"),
    )
    assert deep.returncode == 1 and f"commit {head.id[:12]}" in deep.stdout
    assert diffed.returncode == 1 and "Traceback" not in diffed.stderr
    assert diffed.stderr.startswith("error:") and head.id[:12] in diffed.stderr
    assert "KeyError" not in shallow.stdout + deep.stdout + diffed.stderr
