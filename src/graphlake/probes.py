"""Work counters for tests and benchmarks: how many rows an operation really read.

`with probes.collect() as counts:` gathers the counts of the code it runs (per thread
or task, through a context variable); outside such a block, `add` costs one lookup.
"""

from __future__ import annotations

import contextvars
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

_current: contextvars.ContextVar[Counter[str] | None] = contextvars.ContextVar(
    "graphlake_probes", default=None
)


def add(name: str, n: int = 1) -> None:
    counts = _current.get()
    if counts is not None:
        counts[name] += n


@contextmanager
def collect() -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    token = _current.set(counts)
    try:
        yield counts
    finally:
        _current.reset(token)
