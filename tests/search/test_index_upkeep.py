"""The search indexes' upkeep rules: optimize folds uncovered rows incrementally and
retrains only on drift (`indexes.RETRAIN_RATIO`); the automatic threshold
(`search.upkeep`) behind `g.optimize(if_needed=True)`, `graphlake optimize --if-needed` and
the server's background optimizer; `explain` after write, merge_many and optimize.

The index size rules are scaled down (an ANN index from 256 rows, 256 rows per
partition) so every table here is a few hundred rows of Vector(8).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import graphlake as gl
from graphlake.cli import optimize as cli_optimize
from graphlake.cli.app import app as cli
from graphlake.errors import SearchError
from graphlake.search import upkeep
from graphlake.server.app import create_app
from graphlake.server.auto_optimize import AutoOptimizer
from graphlake.server.config import AutoOptimize, ConfigError, ServerConfig, load_config
from graphlake.storage import search_indexes as indexes

SCHEMA = "node Item { name: String @key, tag: String @search, v: Vector(8) @index }"
SMALL = 256  # MIN_ANN_ROWS and HNSW_ROWS_PER_PARTITION in these tests
Q = np.linspace(-1.0, 1.0, 8).tolist()
LOW = upkeep.Threshold(uncovered_fraction=0.25, uncovered_rows=10_000)


@pytest.fixture(scope="module", autouse=True)
def small_indexes() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(indexes, "MIN_ANN_ROWS", SMALL)
        mp.setattr(indexes, "HNSW_ROWS_PER_PARTITION", SMALL)
        yield


def items(lo: int, hi: int) -> list[dict]:
    rng = np.random.default_rng(lo)
    return [
        {"name": f"i{i}", "tag": f"t{i % 7}", "v": rng.normal(size=8).tolist()}
        for i in range(lo, hi)
    ]


def insert(g: gl.Graph, lo: int, hi: int, branch: str = "main") -> None:
    with g.write(branch) as w:
        w.insert("Item", items(lo, hi))


def ann(g: gl.Graph, branch: str = "main") -> tuple[int, int, int]:
    """The ANN index's partitions, indexed rows and uncovered rows on `branch`."""
    stats = g.snapshot(branch).dataset("Item").stats.index_stats("v_ann")
    return (
        int(stats["indices"][0]["num_partitions"]),
        int(stats["num_indexed_rows"]),
        int(stats["num_unindexed_rows"]),
    )


def reasons(g: gl.Graph, branch: str = "main", threshold=LOW) -> dict[str, str]:
    return {d.index: d.reason for d in upkeep.due(g.snapshot(branch), threshold)}


def coverage(g: gl.Graph, branch: str, **query) -> dict[str, tuple[int, int]]:
    plan = g.search("Item", branch=branch, explain=True, **query)
    return {c.property: (c.indexed_rows, c.exact_rows) for c in plan.coverage}


BEFORE_OPTIMIZE: dict[str, str] = {}


@pytest.fixture(scope="module")
def g(tmp_path_factory) -> gl.Graph:
    """300 rows on main, optimized (one partition); each test works on its own branch."""
    g = gl.Graph.init(tmp_path_factory.mktemp("upkeep") / "g", SCHEMA)
    insert(g, 0, 300)
    BEFORE_OPTIMIZE.update(reasons(g))
    g.optimize()
    return g


def test_due_asks_for_the_build_then_nothing(g):
    assert BEFORE_OPTIMIZE == {"v_ann": "build", "tag_fts": "uncovered"}
    assert ann(g) == (1, 300, 0)
    assert reasons(g) == {}


def test_fold_below_the_drift_ratio_and_retrain_past_it(g):
    g.create_branch("grow")
    insert(g, 1000, 1150, "grow")  # 450 rows: the size asks for 1 partition, as trained
    assert reasons(g, "grow") == {"v_ann": "uncovered", "tag_fts": "uncovered"}
    g.optimize("grow")
    assert ann(g, "grow") == (1, 450, 0)  # folded: same partitions, every row covered
    insert(g, 2000, 2100, "grow")  # 550 rows ask for 2 partitions: RETRAIN_RATIO x 1
    assert reasons(g, "grow")["v_ann"] == "retrain"
    g.optimize("grow")
    assert ann(g, "grow") == (2, 550, 0)
    with g.write("grow") as w:  # deletes halve the partitions the size asks for
        w.delete("Item", [f"i{i}" for i in range(120)])
    assert reasons(g, "grow") == {"v_ann": "retrain"}  # deletes add no uncovered rows
    g.optimize("grow")
    assert ann(g, "grow") == (1, 430, 0)
    best = g.search("Item", vector=Q, k=5, branch="grow", columns=["name"])["name"]
    assert not set(best.to_pylist()) & {f"i{i}" for i in range(120)}


def test_threshold_fraction_and_rows(g):
    g.create_branch("th")
    insert(g, 3000, 3074, "th")  # 74 uncovered of 300: below a quarter
    assert reasons(g, "th") == {}
    assert reasons(g, "th", upkeep.Threshold(0.25, uncovered_rows=74)) == {
        "v_ann": "uncovered",
        "tag_fts": "uncovered",
    }  # the row count alone reaches it
    insert(g, 3074, 3075, "th")  # 75 = 0.25 x 300
    (d, _) = upkeep.due(g.snapshot("th"), LOW)
    assert (d.indexed_rows, d.exact_rows) == (300, 75)
    assert "75 rows uncovered" in str(d)
    assert upkeep.Threshold().limit(10) == 1 and upkeep.Threshold().limit(10**9) == 100_000


@pytest.mark.parametrize(
    "fraction, rows",
    [(0, 1), (-1, 1), (101, 1), ("x", 1), (True, 1), (0.1, 0), (0.1, 1.5), (0.1, False)],
)
def test_bad_thresholds_are_refused(fraction, rows):
    with pytest.raises(SearchError):
        upkeep.Threshold(fraction, rows)


def test_optimize_if_needed(g):
    g.create_branch("ifn")
    insert(g, 4000, 4010, "ifn")
    head = g.head("ifn").id
    assert g.optimize("ifn", if_needed=True).id == head  # below the default threshold
    assert g.optimize("ifn", if_needed=True, threshold=upkeep.Threshold(0.01)).id != head
    assert reasons(g, "ifn", upkeep.Threshold(uncovered_rows=1)) == {}


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_cli_optimize_if_needed(g):
    g.create_branch("cli")
    insert(g, 5000, 5010, "cli")
    head = g.head("cli").id
    code, out, _ = run("optimize", g.uri, "-b", "cli", "--if-needed")
    assert code == 0 and "below the threshold" in out and g.head("cli").id == head
    code, out, _ = run(
        "optimize", g.uri, "-b", "cli", "--if-needed", "--uncovered-rows", "10", "--json"
    )
    doc = json.loads(out)
    assert code == 0 and doc["changed"] and doc["tables"] == ["Item"]
    assert {d["index"]: d["exact_rows"] for d in doc["due"]} == {"v_ann": 10, "tag_fts": 10}
    assert g.head("cli").id == doc["commit"] != head
    code, _, err = run("optimize", g.uri, "--if-needed", "--uncovered-fraction", "0")
    assert code == 2 and "uncovered-fraction" in err


def test_defaults_agree():
    auto = AutoOptimize()
    assert (
        (auto.uncovered_fraction, auto.uncovered_rows)
        == (upkeep.AUTO_UNCOVERED_FRACTION, upkeep.AUTO_UNCOVERED_ROWS)
        == (cli_optimize.UNCOVERED_FRACTION, cli_optimize.UNCOVERED_ROWS)
    )
    assert not auto.enabled


def test_config_auto_optimize(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        '[auto_optimize]\nenabled = true\ninterval_s = 5\nbranches = ["main"]\n'
        "uncovered_fraction = 0.5\n"
    )
    auto = load_config(path, env={}, no_auth=True).auto_optimize
    assert auto == AutoOptimize(True, 5.0, ("main",), 0.5, 100_000)
    for bad in (
        'enabled = "yes"',
        "interval_s = 0",
        "uncovered_rows = -3",
        "branches = 1",
        "uncovered_fraction = 200",
        "every = 3",
    ):
        path.write_text(f"[auto_optimize]\n{bad}\n")
        with pytest.raises(ConfigError, match="auto_optimize"):
            load_config(path, env={}, no_auth=True)


def test_auto_optimizer_optimizes_due_branches_only(g):
    g.create_branch("auto-a")
    g.create_branch("auto-b")
    insert(g, 6000, 6100, "auto-a")
    insert(g, 6100, 6101, "auto-b")
    auto = AutoOptimizer(g, AutoOptimize(True, 60.0, ("auto-a", "auto-b"), 0.25, 10_000))
    assert auto.run_once() == ["auto-a"]
    assert ann(g, "auto-a") == (1, 400, 0) and ann(g, "auto-b")[2] == 1
    assert auto.run_once() == []


def test_auto_optimizer_logs_errors_and_goes_on(g, caplog):
    g.create_branch("auto-err")
    insert(g, 7000, 7100, "auto-err")
    auto = AutoOptimizer(g, AutoOptimize(True, 60.0, ("no-such-branch", "auto-err"), 0.25))
    with caplog.at_level(logging.ERROR, logger="graphlake.server.auto_optimize"):
        assert auto.run_once() == ["auto-err"]
    assert "'no-such-branch' failed" in caplog.text


def test_server_runs_the_background_optimizer(g):
    g.create_branch("served")
    config = ServerConfig(
        no_auth=True, auto_optimize=AutoOptimize(True, 0.05, ("served",), 0.25, 10_000)
    )
    with TestClient(create_app(g, config)) as client:
        assert client.get("/health").status_code == 200
        insert(g, 8000, 8100, "served")
        deadline = time.monotonic() + 60  # generous: the machine is shared
        while ann(g, "served")[2] and time.monotonic() < deadline:
            time.sleep(0.05)
    assert ann(g, "served") == (1, 400, 0)


def test_explain_after_write_merge_many_and_optimize(g):
    g.create_branch("ex")
    q = {"vector": Q, "text": "t3"}
    assert coverage(g, "ex", **q) == {"v": (300, 0), "tag": (300, 0)}
    insert(g, 9000, 9005, "ex")
    assert coverage(g, "ex", **q) == {"v": (300, 5), "tag": (300, 5)}
    for shard, lo in (("ex-s1", 9100), ("ex-s2", 9200)):
        g.create_branch(shard, from_="ex")
        insert(g, lo, lo + 7, shard)
    g.merge_many(["ex-s1", "ex-s2"], into="ex")
    assert coverage(g, "ex", **q) == {"v": (300, 19), "tag": (300, 19)}
    assert coverage(g, "ex", text="t3") == {"tag": (300, 19)}
    g.optimize("ex")
    assert coverage(g, "ex", **q) == {"v": (319, 0), "tag": (319, 0)}


def test_deletes_alone_retrain_a_one_fragment_table(g):
    # Regression: optimize skipped a table of one fully indexed fragment, so a drift from
    # deletes alone was reported due but never retrained (and the background optimizer
    # would have run a no-op optimize every round).
    g.create_branch("del")
    insert(g, 10_000, 10_300, "del")
    g.optimize("del")  # compacts to one fragment; 600 rows ask for 2 partitions
    assert ann(g, "del") == (2, 600, 0)
    assert len(g.snapshot("del").dataset("Item").get_fragments()) == 1
    with g.write("del") as w:
        w.delete("Item", [f"i{i}" for i in range(200)])
    assert reasons(g, "del") == {"v_ann": "retrain"}
    head = g.head("del").id
    assert g.optimize("del", if_needed=True, threshold=LOW).id != head
    assert ann(g, "del") == (1, 400, 0) and reasons(g, "del") == {}
