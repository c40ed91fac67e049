"""The merge oracle on two branches (the first half of its examples; the second half:
`test_oracle_two_branch.py`), and the model against the truth table (see
`tests/merge/oracle.py` for the oracle itself)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings

import graphlake as gl
from tests.conftest import SOCIAL
from tests.merge import model as M
from tests.merge import test_truth_table as TT
from tests.merge.oracle import EXAMPLES_HALVES, SUPPRESS, TWO_BRANCH, World, two_branch_example


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


@pytest.mark.parametrize(("s_op", "t_op"), TT.PAIRS, ids=[f"{s}-{t}" for s, t in TT.PAIRS])
def test_model_agrees_with_the_truth_table(s_op: str, t_op: str) -> None:
    """The oracle's model, on the truth table's 81 pairs, gives the table's expectations:
    its conflict kinds, else "both sides applied"."""
    sides = {}
    for side, op in (("source", s_op), ("target", t_op)):
        sides[side] = copy.deepcopy(TT.BASE)
        TT.OPS[op][1](sides[side], side)
    exp = M.merge(
        TT.BASE,
        [sides["source"]],
        sides["target"],
        source_moved=[sides["source"] != TT.BASE],
        target_moved=sides["target"] != TT.BASE,
    )
    kinds = TT.CONFLICTS.get(frozenset({s_op, t_op}), set())
    if kinds:
        assert exp.outcome == "conflict"
        assert {kind for kind, _, _ in exp.conflicts} == kinds
        return
    both = copy.deepcopy(TT.BASE)
    TT.OPS[s_op][1](both, "source")
    TT.OPS[t_op][1](both, "target")
    assert exp.outcome != "conflict" and exp.result == both


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
