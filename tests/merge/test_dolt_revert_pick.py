"""Differential test of revert and cherry-pick against Dolt (`dolt_revert`,
`dolt_cherry_pick` in doltlite): random histories on two branches, the same outcomes
(applied or conflict) and the same rows on every branch.

Histories are generated on graphlake (so every data step is valid on the rows there),
then replayed on doltlite in one subprocess (`dolt_apply_runner.py`). A revert undoes
one of its branch's own commits, a pick applies one of the other branch's, each at most
once; a conflict publishes nothing on either side.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

import graphlake as gl

if importlib.util.find_spec("doltlite") is None:
    pytest.skip("doltlite is not installed (pip install doltlite)", allow_module_level=True)

RUNNER = Path(__file__).with_name("dolt_apply_runner.py")
SCHEMA = "node Person { name: String @key  age: I64?  b: String? }"
KEYS = ["Alice", "Bob", "Carol"]
EXAMPLES = 24
STEPS = 9
OUTCOME = {"merged": "applied", "conflict": "conflict"}


def _rows(g: gl.Graph, branch: str) -> list[list]:
    t = g.nodes("Person", branch=branch, columns=["name", "age", "b"]).sort_by("name")
    return [list(r.values()) for r in t.to_pylist()]


def _data_step(rnd: random.Random, g: gl.Graph, branch: str) -> list:
    present = {r[0]: r for r in _rows(g, branch)}
    key = rnd.choice(KEYS)
    if key not in present:
        return ["insert", branch, key, {"age": rnd.randint(1, 3)}]
    if rnd.random() < 0.2:
        return ["delete", branch, key, {}]
    col = rnd.choice(["age", "b"])
    now = present[key][1 if col == "age" else 2]
    choices = [1, 2, 3] if col == "age" else [None, "x", "y"]
    value = rnd.choice([v for v in choices if v != now])  # every data step changes a row
    return ["update", branch, key, {col: value}]


def _write(g: gl.Graph, step: list) -> str:
    kind, branch, key, values = step
    with g.write(branch, message=json.dumps(step)) as w:
        if kind == "update":
            w.update("Person", [{"name": key, **values}])
        elif kind == "insert":
            w.insert("Person", [{"name": key, **values}])
        else:
            w.delete("Person", [key])
    return g.head(branch).id


def generate(root: Path, seed: int) -> tuple[list[list], dict]:
    """A random history, run on graphlake: (steps, what graphlake did)."""
    rnd = random.Random(seed)
    g = gl.Graph.init(str(root), SCHEMA)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": "Alice", "age": 30}, {"name": "Bob", "age": 25}])
    g.create_branch("dev")
    steps: list[list] = [["branch", "dev"]]
    made: dict[int, tuple[str, str]] = {}  # step index -> (branch, commit)
    used: set[tuple[str, int]] = set()
    outcomes: list[str] = []
    for _ in range(STEPS):
        branch = rnd.choice(["main", "dev"])
        other = "dev" if branch == "main" else "main"
        own = [i for i, (b, _) in made.items() if b == branch and ("r", i) not in used]
        theirs = [i for i, (b, _) in made.items() if b == other and (branch, i) not in used]
        roll = rnd.random()
        if roll < 0.25 and own:
            i = rnd.choice(own)
            used.add(("r", i))
            step: list = ["revert", branch, i]
            run = partial(g.revert, made[i][1], branch)
        elif roll < 0.5 and theirs:
            i = rnd.choice(theirs)
            used.add((branch, i))
            step = ["pick", i, branch]
            run = partial(g.cherry_pick, made[i][1], into=branch)
        else:
            step = _data_step(rnd, g, branch)
            made[len(steps)] = (branch, _write(g, step))
            steps.append(step)
            continue
        try:
            outcomes.append(OUTCOME.get(run().outcome, "noop"))
        except gl.MergeConflictError:
            outcomes.append("conflict")
        steps.append(step)
    return steps, {"outcomes": outcomes, "rows": {b: _rows(g, b) for b in ("main", "dev")}}


def test_revert_and_cherry_pick_agree_with_dolt(tmp_path: Path) -> None:
    cases = [generate(tmp_path / f"g{seed}", seed) for seed in range(EXAMPLES)]
    out = subprocess.run(
        [sys.executable, str(RUNNER)],
        input=json.dumps([s for s, _ in cases]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    dolt = json.loads(out.stdout.strip().splitlines()[-1])
    applied = conflicts = 0
    for seed, ((steps, ours), theirs) in enumerate(zip(cases, dolt, strict=True)):
        assert ours == theirs, f"seed {seed}: {steps}"
        applied += ours["outcomes"].count("applied")
        conflicts += ours["outcomes"].count("conflict")
    assert applied >= 10 and conflicts >= 3  # the histories exercise both
