"""Skip the commits that cannot have changed one row, without reading them.

Row history and blame walk every first-parent commit, and most of them (a busy table's
commits of other rows) leave the row alone. Each Lance row carries the version that
created or last updated it (`_row_created_at_version`, `_row_last_updated_at_version`,
kept by Lance with stable row ids; zero-copy adoption drops them so Lance assigns them
in the adopting lineage). Reading the row once at a state, by key, gives a
`lineage.RowStamp`: every ancestor state on that Lance lineage at or after the writing
version holds the very same row. A commit whose parent state and own state both lie in
that window changed nothing of the row, and is skipped with catalog reads only; only the
commit that wrote the row is read (`walk.commit_changes`: lineage candidates, then the
rows, compared). So one row's history over N commits costs one keyed read per change of
the row plus N catalog reads, whatever the table's size or the other rows' churn.

Nothing is stored for this at publish time: the metadata Lance already keeps is enough.
Where it is not (no stable row ids, a schema-changing commit, a state off the lineage,
the row absent), the commit is read as before: a skip is only ever an optimisation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlake import probes
from graphlake.storage import lineage as lin
from graphlake.timeline.walk import RowChange, row_change, shown, table_name

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit, TableState
    from graphlake.repo import Repo


class RowSkip:
    """Walks one row's commits newest first: `unchanged(parent, commit)` says, from row
    version metadata alone, that `commit` did not change the row; `saw(changes)` tells
    it what a commit that was read did (so it knows whether the row exists further
    back)."""

    def __init__(self, repo: Repo, table_id: str, key: str) -> None:
        self._repo = repo
        self._table_id = table_id
        self._key = key
        self._stamp: lin.RowStamp | None = None
        self._stamp_schema = ""  # the schema of the commit whose state was stamped
        self._absent: tuple[str, str, int] | None = None  # a state known to lack the row
        self._off = False

    def unchanged(self, parent: Commit, commit: Commit) -> bool:
        if self._off or parent.schema_id != commit.schema_id:
            return False
        before, after = self._state(parent), self._state(commit)
        if before is None or after is None:
            return False
        if self._stamp is None or not self._stamp.holds(after):
            if _where(after) == self._absent:
                return False
            try:
                self._stamp = lin.row_stamp(self._repo.tables, after, self._key)
                self._stamp_schema = commit.schema_id
            except lin.LineageUnavailable:
                self._off = True
                return False
            if self._stamp is None:
                self._absent = _where(after)
                return False
        if self._stamp.holds(before):
            probes.add("timeline_skipped")
            return True
        return False

    def changes(self, parent: Commit, commit: Commit) -> list[RowChange] | None:
        """What `commit` did to the row when (after `unchanged` said no) the stamp shows
        the row was written between `parent` and `commit`: the row at `parent` (one
        keyed read, which is also the stamp the walk goes on with) against the stamped
        row. None when the stamp cannot tell: the caller reads the commit."""
        before, after = self._state(parent), self._state(commit)
        stamp = self._stamp
        if (
            stamp is None
            or before is None
            or after is None
            or parent.schema_id != commit.schema_id
            or self._stamp_schema != commit.schema_id  # its row is in another layout
            or not stamp.holds(after)
        ):
            return None
        cap = stamp.chain.get(before.lance_branch)
        if cap is None or before.table_id != stamp.table_id or not before.version <= cap:
            return None
        probes.add("timeline_commits")
        try:
            older = lin.row_stamp(self._repo.tables, before, self._key)
        except lin.LineageUnavailable:
            self._off = True
            return None
        self._stamp, self._stamp_schema = older, parent.schema_id
        self._absent = _where(before) if older is None else None
        old = None if older is None else older.row
        if old == stamp.row:
            return []
        name = table_name(commit, self._table_id)
        assert name is not None
        return shown(self._repo, commit, [row_change(name, self._key, old, stamp.row)])

    def saw(self, parent: Commit, commit: Commit, changes: list[RowChange]) -> None:
        """`commit` was read against `parent`: `changes` are the row's (empty: none).
        When the row was absent after the commit and untouched, or inserted by it, the
        parent lacks it too: remember that instead of reading it again."""
        before, after = self._state(parent), self._state(commit)
        if before is None:
            return
        if changes:
            if changes[0].old is None:
                self._absent = _where(before)
        elif after is not None and _where(after) == self._absent:
            self._absent = _where(before)

    def _state(self, commit: Commit) -> TableState | None:
        name = table_name(commit, self._table_id)
        return None if name is None else commit.tables[name]


def _where(state: TableState) -> tuple[str, str, int]:
    return (state.table_id, state.lance_branch, state.version)
