"""The change feed's batched read: a run of write commits at once, not one at a time.

Read commit by commit (`walk.commit_changes`), the feed pays for every commit a Lance
delta, a deleted-row-id lookup and two keyed reads, each opening manifests that grow
with the table's fragments (~40 ms a commit on a table left with ~1,000 fragments by
1,000 small commits). A write commit records what it did to each table it changed
(`Commit.effects`, written at publish time: rows appended, keys deleted outright; a
revert or cherry-pick that applied plans of rows only records the same), and
with that record a run of consecutive first-parent write commits is read per table with

* one scan of the fragments the run appended, at the run's last state
  (`include_deleted_rows`: rows a later commit replaced or deleted are still there),
  each row placed in its commit by Lance's `_row_created_at_version`;
* one keyed read of the run's keys at the run's first state (the old values);

then every commit's changes follow in memory: a key's row after a commit is the row it
wrote, None if it deleted the key, else the row before. An update removes the key's old
row and appends the new one, so the appended rows and the deleted keys are the whole
effect.

A commit is read this way only when that is provably its effect (`batchable`): one
parent, the parent's schema, and for every table whose state changed a recorded effect
that names its deleted keys, on the same Lance branch (no fork between the two states).
Merges, reverts and picks that adopted states or fragments, schema changes, optimize,
overwrites, backfills, commits with more deleted keys than the record holds and commits
written before effects were recorded are read one by one as before. Within a run, a
commit whose appended rows the scan does not find in full (a fragment whose every row a
later commit replaced is gone from the manifest) has them read from its own state, or
else is read by lineage; any other surprise (a row older than the run in a new
fragment, a layout change) reads the whole run by lineage. The result is exactly what
`commit_changes` gives, commit by commit (tests/timeline/test_feed_batch.py and
test_feed_history_ops.py compare both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphlake import probes
from graphlake.storage.lookup import rows_where_in
from graphlake.timeline import walk
from graphlake.timeline.walk import Row, RowChange

if TYPE_CHECKING:
    import lance

    from graphlake.catalog.commits import Commit, TableEffect, TableState
    from graphlake.repo import Repo

_CREATED = "_row_created_at_version"
_ROWID = "_rowid"


def batchable(parent: Commit, commit: Commit) -> bool:
    """Whether `commit` (whose first parent is `parent`) can be read in a run: catalog
    data only."""
    if len(commit.parents) != 1 or commit.parents[0] != parent.id:
        return False
    if commit.schema_id != parent.schema_id or commit.tables.keys() != parent.tables.keys():
        return False
    for name, after in commit.tables.items():
        before = parent.tables[name]
        if walk.same_state(before, after):
            continue
        effect = None if commit.effects is None else commit.effects.get(name)
        if (
            effect is None
            or effect.deleted is None
            or before.table_id != after.table_id
            or before.lance_branch != after.lance_branch
            or after.version <= before.version
        ):
            return False
    return True


def bound(commit: Commit) -> int:
    """At most this many changes in a batchable commit (rows written plus keys deleted)."""
    if commit.effects is None:
        return 0  # batchable without a record: it changed no table
    return sum(e.written + e.deleted_count for e in commit.effects.values())


@dataclass(frozen=True)
class _Step:
    """One commit of the run that changed the table: the run's `index`-th."""

    index: int
    before: TableState
    after: TableState
    effect: TableEffect


def run_changes(repo: Repo, parent: Commit, run: list[Commit]) -> list[list[RowChange]]:
    """Each commit's changes in `run` (as `walk.commit_changes` gives them: sorted by
    table and key, values shown), for commits each `batchable` against the one before
    it (the first against `parent`)."""
    steps: dict[str, list[_Step]] = {}
    prev = parent
    for i, commit in enumerate(run):
        for name, after in commit.tables.items():
            before = prev.tables[name]
            if not walk.same_state(before, after):
                assert commit.effects is not None
                steps.setdefault(name, []).append(_Step(i, before, after, commit.effects[name]))
        prev = commit
    out: list[list[RowChange]] = [[] for _ in run]
    for name in sorted(steps):
        cols = walk.float32_columns(repo.tables.open(steps[name][-1].after).schema)
        for i, changes in _table_run(repo, name, steps[name]):
            out[i] += [walk.shorten(c, cols) for c in changes]
    return out


def _table_run(repo: Repo, name: str, steps: list[_Step]) -> list[tuple[int, list[RowChange]]]:
    written = _written_rows(repo, steps)
    if written is None:
        return [(s.index, walk.table_changes(repo, name, s.before, s.after)) for s in steps]
    probes.add("timeline_batched", sum(rows is not None for rows in written))
    keys: set[str] = set()
    for step, rows in zip(steps, written, strict=True):
        if rows is not None:
            keys.update(r["id"] for r in rows)
            keys.update(step.effect.deleted or ())
    base = _rows_at(repo.tables.open(steps[0].before), keys)
    now: dict[str, Row | None] = {}  # a key's row after the steps so far, once touched
    missing: Any = object()
    out: list[tuple[int, list[RowChange]]] = []
    for step, rows in zip(steps, written, strict=True):
        if rows is None:
            changes = walk.table_changes(repo, name, step.before, step.after)
            for c in changes:
                now[c.key] = c.new
            out.append((step.index, changes))
            continue
        touched: dict[str, Row | None] = dict.fromkeys(step.effect.deleted or ())
        for row in rows:
            touched[row["id"]] = row
        changes = []
        for key in sorted(touched):
            old = now.get(key, missing)
            if old is missing:
                old = base.get(key)
            new = now[key] = touched[key]
            if old != new:
                changes.append(walk.row_change(name, key, old, new))
        out.append((step.index, changes))
    return out


def _written_rows(repo: Repo, steps: list[_Step]) -> list[list[Row] | None] | None:
    """The rows each step appended (None for a step whose rows are not all found), from
    one scan of the fragments the run added; None when the run cannot be read so."""
    first, last = steps[0].before, steps[-1].after
    try:
        start, end = repo.tables.open(first), repo.tables.open(last)
        if start.schema != end.schema:
            return None
        low = max(start.fragment_ids(), default=-1)
        new = [f for f in end.get_fragments() if f.fragment_id > low]
        table = _scan(end, new)
    except (OSError, ValueError, TypeError, RuntimeError):
        return None  # e.g. no stable row ids: no row version metadata to place rows by
    created = table.column(_CREATED)
    if created.null_count:
        return None
    versions = created.to_numpy()
    if len(versions) and (versions.min() <= first.version or versions.max() > last.version):
        return None  # a row older than the run in a new fragment: not appends only
    ends = np.array([s.after.version for s in steps])
    which = np.searchsorted(ends, versions, side="left")  # the step whose range holds it
    rows = table.drop_columns([_CREATED, _ROWID]).to_pylist()
    found: list[list[Row]] = [[] for _ in steps]
    for i, row in zip(which.tolist(), rows, strict=True):
        found[i].append(row)
    out: list[list[Row] | None] = []
    seen = set(end.fragment_ids())
    for step, got in zip(steps, found, strict=True):
        if len(got) < step.effect.written:
            got += _emptied(repo, step, low, seen)
        complete = len(got) == step.effect.written and len({r["id"] for r in got}) == len(got)
        out.append(got if complete else None)
    return out


def _emptied(repo: Repo, step: _Step, low: int, seen: set[int]) -> list[Row]:
    """The rows `step` appended to fragments that are gone by the run's end (a later
    step replaced or deleted all their rows, and Lance dropped them): read from the
    step's own state, where they still are. One manifest, a few small fragments."""
    try:
        ds = repo.tables.open(step.after)
        gone = [i for i in ds.fragment_ids() if i > low and i not in seen]
        fragments = [f for f in (ds.get_fragment(i) for i in gone) if f is not None]
        if not fragments:
            return []
        table = _scan(ds, fragments)
    except (OSError, ValueError, TypeError, RuntimeError):
        return []  # the step is then read by lineage
    created = pc.field(_CREATED)
    mine = (created > step.before.version) & (created <= step.after.version)
    return table.filter(mine).drop_columns([_CREATED, _ROWID]).to_pylist()


def _scan(ds: lance.LanceDataset, fragments: list[lance.LanceFragment]) -> pa.Table:
    columns = [*ds.schema.names, _CREATED]
    if not fragments:  # an empty list would mean every fragment
        empty = ds.scanner(columns=columns, with_row_id=True, limit=0).to_table()
        return empty.slice(0, 0)
    return ds.scanner(
        fragments=fragments, columns=columns, with_row_id=True, include_deleted_rows=True
    ).to_table()


def _rows_at(ds: lance.LanceDataset, keys: set[str]) -> dict[str, Row]:
    if not keys:
        return {}
    found = rows_where_in(ds, "id", sorted(keys), distinct=True)
    return {r["id"]: r for r in found.to_pylist()}
