"""The merge oracle on two branches and the model against the truth table, the second
half of each (the first half: `test_oracle.py`): a module of its own, so that
pytest-xdist runs the halves side by side (see `tests/merge/oracle.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

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
    max_examples=EXAMPLES_HALVES[1],
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(**TWO_BRANCH)
def test_two_branch_merge_matches_the_model_second_half(
    world: World, prefix, src, tgt, strategy
) -> None:
    two_branch_example(world, prefix, src, tgt, strategy)


@pytest.mark.parametrize(
    ("s_op", "t_op"), PAIRS_HALVES[1], ids=[f"{s}-{t}" for s, t in PAIRS_HALVES[1]]
)
def test_model_agrees_with_the_truth_table_second_half(s_op: str, t_op: str) -> None:
    model_agrees_with_the_truth_table(s_op, t_op)
