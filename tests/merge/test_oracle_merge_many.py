"""The merge oracle on N branches merged by merge_many (see `tests/merge/oracle.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.merge import model as M
from tests.merge.oracle import (
    BASE,
    EXAMPLES_N,
    SUPPRESS,
    World,
    histories,
    make_branch,
    merge_all_modes,
    modes_for,
    strategies,
)


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES_N,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=SUPPRESS,
)
@given(
    srcs=st.lists(
        st.one_of(
            histories(intents_per_commit=3),
            histories(flip=True, intents_per_commit=3),
            histories(flip=True, intents_per_commit=3, inserts_only=True),
        ),
        min_size=3,
        max_size=5,
    ),
    tgt=histories(flip=True, intents_per_commit=3),
    strategy=strategies,
    strict=st.sampled_from([False, False, False, True]),
)
def test_n_branch_merge_many_matches_the_model(world: World, srcs, tgt, strategy, strict) -> None:
    name = world.fresh()
    sources = [make_branch(world, f"{name}-s{i}", "main", BASE, h) for i, h in enumerate(srcs)]
    target = make_branch(world, f"{name}-t", "main", BASE, tgt)
    exp = M.merge(
        BASE,
        [s.model for s in sources],
        target.model,
        source_moved=[s.moved for s in sources],
        target_moved=target.moved,
        strategy=strategy,
        strict_disjoint=strict,
    )
    merge_all_modes(
        world, target, sources, exp, modes_for(name, 5), strategy=strategy, strict_disjoint=strict
    )
