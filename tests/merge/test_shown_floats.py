"""Float32 values in diff rows and in merge, revert and cherry-pick conflict rows show as
the shortest decimal that round-trips them (issue 23, item 7): a float32 `0.122` is
`0.122` in `g.diff`, in a conflict's rows, in the CLI's `--json` and in HTTP JSON, never
`0.12200000137090683` (its float64 widening, what the rows held before)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import graphlake as gl
from graphlake.errors import MergeConflictError
from tests.cli.helpers import parsed, run_all

SCHEMA = "node M { k: String @key  f: F32?  v: Vector(2)?  n: I32? }\n"
NOISE = "0.12200000137090683"
OLD, MAIN, DEV = 0.122, 0.345, 0.678


def _noisy(x: float) -> float:
    return float(np.float32(x))  # what a float32 reads as, widened


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main and dev both changed `f` of row a (a conflict); dev also inserted row b and
    changed `f` of row c; `pick` is dev's commit that made the conflict."""
    root = tmp_path_factory.mktemp("floats") / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write(message="base") as w:
        w.insert(
            "M",
            [
                {"k": "a", "f": OLD, "v": [OLD, 0.5], "n": 1},
                {"k": "c", "f": OLD, "n": 1},
            ],
        )
    g.create_branch("dev")
    with g.write("dev", message="dev") as w:
        w.update("M", [{"k": "a", "f": DEV, "v": [DEV, 0.5]}, {"k": "c", "f": DEV}])
        w.insert("M", [{"k": "b", "f": OLD, "v": [OLD, OLD]}])
    with g.write(message="main") as w:
        w.update("M", [{"k": "a", "f": MAIN, "v": [MAIN, 0.5]}])
    assert _noisy(OLD) != OLD  # the test means something: float32 0.122 widens noisily
    return root


def test_diff_rows_show_float32_shortest(root: Path) -> None:
    g = gl.Graph.open(root)
    d = g.diff("main", "dev")["M"]
    assert d.changes["a"]["f"] == (MAIN, DEV)
    assert d.changes["a"]["v"] == ([MAIN, 0.5], [DEV, 0.5])
    assert d.changes["c"]["f"] == (OLD, DEV)
    assert d.inserted_rows["b"]["f"] == OLD and d.inserted_rows["b"]["v"] == [OLD, OLD]
    back = g.diff("dev", "main")["M"]
    assert back.deleted_rows["b"]["f"] == OLD and back.deleted_rows["b"]["v"] == [OLD, OLD]


def _conflict_rows(conflict) -> list[dict]:  # type: ignore[no-untyped-def]
    return [conflict.base, conflict.source, conflict.target]


def test_merge_conflict_rows_show_float32_shortest(root: Path) -> None:
    g = gl.Graph.open(root)
    dry = g.merge("dev", "main", dry_run=True)
    [c] = [c for c in dry.conflicts if c.entity_id == "a"]
    assert [r["f"] for r in _conflict_rows(c)] == [OLD, DEV, MAIN]
    assert [r["v"] for r in _conflict_rows(c)] == [[OLD, 0.5], [DEV, 0.5], [MAIN, 0.5]]
    with pytest.raises(MergeConflictError) as info:
        g.merge("dev", "main")
    [raised] = [c for c in info.value.conflicts if c.entity_id == "a"]
    assert [r["f"] for r in _conflict_rows(raised)] == [OLD, DEV, MAIN]


def test_revert_and_cherry_pick_conflict_rows_show_float32_shortest(root: Path) -> None:
    g = gl.Graph.open(root)
    pick = g.head("dev").id
    picked = g.cherry_pick(pick, "main", dry_run=True)
    [c] = [c for c in picked.conflicts if c.entity_id == "a"]
    assert [r["f"] for r in _conflict_rows(c)] == [OLD, DEV, MAIN]
    # Reverting main's change of `a` on dev, whose `a` differs from what main set.
    g.create_branch("side", "main~1")
    with g.write("side", message="side") as w:
        w.update("M", [{"k": "a", "f": DEV}])
    with pytest.raises(MergeConflictError) as info:
        g.cherry_pick(g.head("main").id, "side")
    [c] = [c for c in info.value.conflicts if c.entity_id == "a"]
    assert {r["f"] for r in _conflict_rows(c)} == {OLD, DEV, MAIN}
    reverted = g.revert(g.head("main").id, "main", dry_run=True)
    assert not reverted.conflicts  # a clean revert, for contrast: no rows to show
    g.merge("main", "side", strategy="theirs")  # side's a is now main's
    with g.write("side", message="again") as w:
        w.update("M", [{"k": "a", "f": DEV}])
    rev = g.revert(g.log("main")[0].id, "side", dry_run=True)
    [c] = [c for c in rev.conflicts if c.entity_id == "a"]
    assert {r["f"] for r in _conflict_rows(c)} == {OLD, DEV, MAIN}


def test_cli_and_http_json_show_float32_shortest(root: Path) -> None:
    from fastapi.testclient import TestClient

    from graphlake.server.app import create_app
    from graphlake.server.config import ServerConfig

    diff, merge = run_all(
        ("diff", root, "main", "dev", "--json"),
        ("merge", root, "dev", "--dry-run", "--json"),
    )
    assert NOISE not in diff.stdout and NOISE not in merge.stdout
    shown = json.dumps(parsed(diff))
    assert "0.122" in shown and "0.678" in shown
    assert "0.678" in json.dumps(parsed(merge, merge.returncode))
    app = create_app(root, ServerConfig(no_auth=True))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        d = client.get("/diff", params={"a": "main", "b": "dev"})
        m = client.post("/merge", json={"source": "dev", "into": "main", "dry_run": True})
    assert d.status_code == 200 and NOISE not in d.text and "0.122" in d.text
    assert NOISE not in m.text and "0.678" in m.text and "0.345" in m.text
