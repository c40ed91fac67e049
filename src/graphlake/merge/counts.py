"""Merge statistics that count what `diff` counts: for tables whose route decided them
without discovering a side's changes (a schema merge's evolved or adopted tables, a
column route's backfilled source), each side's `source_changes` / `target_changes` is
the number of rows `diff(base, side)` reports inserted, updated or deleted in that table.
A merge_many that folds sources on different schemas (merge/many_schema.py) counts
every table this way: its steps' own counts are against each step's base.

Costs one diff of the named tables per side (lineage: O(changed rows)); routes that
discovered both sides already hold these counts and are left alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlake.merge import result as R
from graphlake.merge.diff import diff

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo

# Discovery labels of routes that did not count both sides' changes.
UNCOUNTED = ("schema", "backfill")


def fill_counts(
    repo: Repo,
    base: Commit,
    target: Commit,
    sources: list[Commit],
    stats: dict[str, R.TableStats],
    every: bool = False,
) -> None:
    """Set the counts of the tables whose route did not count them (`every`: of all)."""
    tables = {n for n, st in stats.items() if every or st.discovery in UNCOUNTED}
    if not tables:
        return
    target_counts = _counts(repo, base, target, tables)
    source_counts = [_counts(repo, base, s, tables) for s in sources]
    for name in tables:
        st = stats[name]
        st.target_changes = target_counts.get(name, 0)
        st.source_changes = sum(c.get(name, 0) for c in source_counts)


def _counts(repo: Repo, base: Commit, side: Commit, tables: set[str]) -> dict[str, int]:
    changes = diff(repo, base.id, side.id, limit=0, only=tables)
    return {n: sum(d.counts.values()) for n, d in changes.items()}
