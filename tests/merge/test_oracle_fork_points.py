"""The merge oracle on merge_many sources forked from different commits of the target
(see `tests/merge/oracle.py`)."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.merge import model as M
from tests.merge.oracle import (
    _STAGGERED,
    BASE,
    EXAMPLES_N,
    SUPPRESS,
    World,
    histories,
    make_staggered_source,
    make_trunk,
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
    trunk=st.lists(histories(flip=True, intents_per_commit=3), min_size=2, max_size=2),
    srcs=st.lists(_STAGGERED, min_size=2, max_size=4),
    strategy=strategies,
    strict=st.sampled_from([False, False, False, True]),
)
def test_merge_many_from_different_fork_points_matches_the_model(
    world: World, trunk, srcs, strategy, strict
) -> None:
    name = world.fresh()
    target, points = make_trunk(world, f"{name}-t", trunk)
    made = [
        make_staggered_source(world, f"{name}-s{i}", points, spec) for i, spec in enumerate(srcs)
    ]
    sources = [s for s, _ in made]
    bases = [b for _, b in made]
    if len({b.rank for s, b in made if s.moved}) > 1:
        event("sources with different bases")
    exp = M.merge(
        BASE,
        [s.model for s in sources],
        target.model,
        source_moved=[s.moved for s in sources],
        target_moved=any(b.head != target.head for s, b in made if s.moved),
        strategy=strategy,
        strict_disjoint=strict,
        bases=[b.model for b in bases],
        base_ranks=[b.rank for b in bases],
    )
    merge_all_modes(
        world, target, sources, exp, modes_for(name, 5), strategy=strategy, strict_disjoint=strict
    )
