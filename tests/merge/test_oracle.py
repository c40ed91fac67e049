"""The merge oracle on two branches and the model against the truth table, the first
half of each (the second half: `test_oracle_two_branch.py`; see `tests/merge/oracle.py`
for the oracle itself and why it is split)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge.oracle import (
    EXAMPLES_HALVES,
    PAIRS_HALVES,
    SUPPRESS,
    TWO_BRANCH,
    World,
    model_agrees_with_the_truth_table,
    two_branch_example,
)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES_HALVES[0],
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(**TWO_BRANCH)
def test_two_branch_merge_matches_the_model(world: World, prefix, src, tgt, strategy) -> None:
    two_branch_example(world, prefix, src, tgt, strategy)


# --- the model against the hand-written truth table ---------------------------------------------


@pytest.mark.parametrize(
    ("s_op", "t_op"), PAIRS_HALVES[0], ids=[f"{s}-{t}" for s, t in PAIRS_HALVES[0]]
)
def test_model_agrees_with_the_truth_table(s_op: str, t_op: str) -> None:
    """The first half of the truth table's pairs (the second: test_oracle_two_branch.py)."""
    model_agrees_with_the_truth_table(s_op, t_op)


# --- write-path findings: cascades apply in call order ------------------------------------


@pytest.fixture
def small(tmp_path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", SOCIAL)
    with g.write() as w:
        w.insert("Person", [{"name": n} for n in "ABC"])
        w.insert(
            "Knows", [{"id": "k0", "src": "A", "dst": "B"}, {"id": "k1", "src": "B", "dst": "C"}]
        )
    return g


def test_cascade_delete_then_reinsert_in_one_write(small: gl.Graph) -> None:
    with small.write() as w:
        w.delete("Person", ["C"], cascade=True)  # removes k1 (B->C)
        w.insert("Person", [{"name": "C"}])
    assert small.edges("Knows").column("id").to_pylist() == ["k0"]


def test_cascade_delete_then_rewrite_in_one_write(small: gl.Graph) -> None:
    with small.write() as w:
        w.delete("Person", ["C"], cascade=True)  # removes k1 (B->C)
        w.insert("Knows", [{"id": "k1", "src": "A", "dst": "B"}])
    assert M.rows(small, "main")["Knows"]["k1"]["src"] == "A"
