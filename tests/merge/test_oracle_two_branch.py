"""The merge oracle on two branches, the second half of its examples (the first half:
`test_oracle.py`): a module of its own, so that pytest-xdist runs the halves side by
side (see `tests/merge/oracle.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from tests.merge.oracle import EXAMPLES_HALVES, SUPPRESS, TWO_BRANCH, World, two_branch_example


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
