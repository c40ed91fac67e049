"""Differential test against Dolt (doltlite): the same histories, the same merge outcomes
and the same rows on every branch.

Each scenario is a list of steps replayed on graphlake here and on doltlite in a
subprocess (`dolt_runner.py`). Every data change is its own commit on both sides. The
scenarios centre on merges whose sides converge, which must be recorded as merge commits
(Dolt does, as git does), and on what later merges in both directions then do.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import graphlake as gl

# Only look doltlite up: importing it here would re-exec the interpreter (pytest with it)
# because sqlite3 is already loaded.
if importlib.util.find_spec("doltlite") is None:
    pytest.skip("doltlite is not installed (pip install doltlite)", allow_module_level=True)

RUNNER = Path(__file__).with_name("dolt_runner.py")
SCHEMA = "node Person { name: String @key  age: I64?  b: String? }"

SCENARIOS: dict[str, list[list]] = {
    "equal_updates_then_target_moves": [
        ["branch", "feature"],
        ["update", "feature", "Alice", {"age": 31}],
        ["update", "main", "Alice", {"age": 31}],
        ["merge", "feature", "main"],
        ["update", "main", "Alice", {"age": 35}],
        ["merge", "feature", "main"],
        ["merge", "main", "feature"],
    ],
    "target_later_change_survives": [
        ["branch", "dev"],
        ["update", "dev", "Alice", {"b": "y"}],
        ["update", "main", "Alice", {"b": "y"}],
        ["merge", "dev", "main"],
        ["update", "main", "Alice", {"b": None}],
        ["merge", "dev", "main"],
        ["merge", "main", "dev"],
    ],
    "both_delete_then_reinsert": [
        ["branch", "dev"],
        ["delete", "dev", "Alice", {}],
        ["delete", "main", "Alice", {}],
        ["merge", "dev", "main"],
        ["insert", "main", "Alice", {"age": 1}],
        ["merge", "dev", "main"],
        ["merge", "main", "dev"],
    ],
    "net_zero_source": [
        ["branch", "dev"],
        ["update", "dev", "Bob", {"age": 26}],
        ["update", "dev", "Bob", {"age": 25}],
        ["update", "main", "Alice", {"age": 40}],
        ["merge", "dev", "main"],
        ["update", "main", "Bob", {"age": 50}],
        ["merge", "dev", "main"],
        ["merge", "main", "dev"],
    ],
    "converge_then_diverge_elsewhere": [
        ["branch", "dev"],
        ["update", "dev", "Alice", {"age": 31}],
        ["update", "main", "Alice", {"age": 31}],
        ["merge", "main", "dev"],
        ["update", "dev", "Bob", {"b": "d"}],
        ["update", "main", "Alice", {"b": "m"}],
        ["merge", "dev", "main"],
        ["merge", "main", "dev"],
    ],
    "real_conflict_after_convergence": [
        ["branch", "dev"],
        ["update", "dev", "Alice", {"age": 31}],
        ["update", "main", "Alice", {"age": 31}],
        ["merge", "dev", "main"],
        ["update", "dev", "Alice", {"age": 7}],
        ["update", "main", "Alice", {"age": 8}],
        ["merge", "dev", "main"],
    ],
}


def run_dolt(steps: list[list]) -> dict:
    out = subprocess.run(
        [sys.executable, str(RUNNER)],
        input=json.dumps(steps),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_graphlake(root: Path, steps: list[list]) -> dict:
    g = gl.Graph.init(str(root), SCHEMA)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": "Alice", "age": 30}, {"name": "Bob", "age": 25}])
    branches = ["main"]
    outcomes = []
    for step in steps:
        kind = step[0]
        if kind == "branch":
            g.create_branch(step[1])
            branches.append(step[1])
        elif kind == "merge":
            try:
                outcomes.append(g.merge(step[1], into=step[2]).outcome)
            except gl.MergeConflictError:
                outcomes.append("conflict")
        else:
            branch, key, values = step[1], step[2], step[3]
            with g.write(branch) as w:
                if kind == "update":
                    w.update("Person", [{"name": key, **values}])
                elif kind == "insert":
                    w.insert("Person", [{"name": key, **values}])
                else:
                    w.delete("Person", [key])
    rows = {}
    for b in branches:
        t = g.nodes("Person", branch=b, columns=["name", "age", "b"]).sort_by("name")
        rows[b] = [list(r.values()) for r in t.to_pylist()]
    return {"outcomes": outcomes, "rows": rows}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_outcomes_and_rows_as_dolt(tmp_path, name: str) -> None:
    steps = SCENARIOS[name]
    dolt = run_dolt(steps)
    ours = run_graphlake(tmp_path / "g", steps)
    assert ours["outcomes"] == dolt["outcomes"]
    assert ours["rows"] == dolt["rows"]
