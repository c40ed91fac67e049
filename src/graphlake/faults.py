"""Named fault points for crash testing.

Every physical step of publishing a write, merge, merge_many or optimize calls
`hit(point)`, as do the steps of `gc`. With ``GRAPHLAKE_FAULT=<point>`` set, the process
exits at once (`os._exit`, no cleanup, no `finally`) when it reaches that point: the
closest a test can get to pulling the plug. ``GRAPHLAKE_FAULT=<point>:<n>`` exits at the
n-th time the point is reached (points that repeat, such as one per table effect).
Unset, `hit` costs one environment lookup.

`POINTS` lists every point; the crash-matrix tests run each one.
"""

from __future__ import annotations

import os
import threading

from graphlake.errors import GraphLakeError

ENV = "GRAPHLAKE_FAULT"
# The exit status of a process stopped at a fault point (distinct from errors and signals).
EXIT_CODE = 86

OPERATIONS = ("write", "merge", "merge_many", "optimize", "schema")
# In order of occurrence within one publication.
STEPS = (
    "after_record",  # the recovery record exists; nothing else yet
    "after_table_effect",  # one table's new Lance versions exist (repeats per table)
    "before_ref_cas",  # every effect and the commit object exist; ref not moved
    "after_ref_cas",  # the ref moved (published); the record is still there
    "during_cleanup",  # on the way out: the record is about to be removed
)
# Between the Lance commits of one table effect (delete, then append, then index).
TABLE_POINTS = ("table.after_delete", "table.after_append")
# After the merge_many of an ingest, while shard branches are removed.
INGEST_POINTS = ("ingest.after_merge", "ingest.during_cleanup")
# Inside `gc`: its roots are known and nothing is removed yet; its notice of what it
# will remove is published (catalog/reclaim.py), nothing removed yet; one table's Lance
# versions and files are swept (repeats per table); an unreachable commit object is
# about to be removed (repeats per object).
GC_POINTS = (
    "gc.after_roots",
    "gc.after_notice",
    "gc.after_table_sweep",
    "gc.before_commit_removal",
)
# A tag, reset or branch create naming a commit (catalog/reclaim.py): its pin exists,
# gc's notices not read yet; the commit is checked, its ref not written yet.
REF_TARGET_POINTS = ("ref_target.after_pin", "ref_target.before_ref")
# A reader taking a read lease (catalog/leases.py): the lease object exists, gc's
# notices not read yet; the commit is checked, no table opened yet.
READ_LEASE_POINTS = ("read_lease.after_create", "read_lease.after_check")

POINTS: tuple[str, ...] = (
    *(f"{op}.{step}" for op in OPERATIONS for step in STEPS),
    *TABLE_POINTS,
    *INGEST_POINTS,
    *GC_POINTS,
    *REF_TARGET_POINTS,
    *READ_LEASE_POINTS,
)

_counts: dict[str, int] = {}
_lock = threading.Lock()


class FaultConfigError(GraphLakeError):
    """`GRAPHLAKE_FAULT` names no known fault point."""


def _parse(spec: str) -> tuple[str, int]:
    name, _, nth = spec.partition(":")
    if name not in POINTS:
        raise FaultConfigError(f"{ENV}={spec!r}: unknown fault point (see graphlake.faults.POINTS)")
    try:
        n = int(nth) if nth else 1
    except ValueError:
        raise FaultConfigError(f"{ENV}={spec!r}: the count after ':' must be a number") from None
    if n < 1:
        raise FaultConfigError(f"{ENV}={spec!r}: the count after ':' must be at least 1")
    return name, n


def hit(point: str) -> None:
    """Exit the process here if `GRAPHLAKE_FAULT` names this point (and count)."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, n = _parse(spec)
    if name != point:
        return
    with _lock:
        _counts[point] = count = _counts.get(point, 0) + 1
    if count == n:
        os._exit(EXIT_CODE)
