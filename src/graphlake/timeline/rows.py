"""Row history and blame of one row, on the shared lineage walk (`timeline.walk`).

`row_history` lists the first-parent commits that changed the row, newest first. Only
the commits whose pinned state of the row's table differs from their parent's are
looked at, and of those only the row's own key is read (lineage candidates, then the
row by key); see `walk.commit_changes`.

`blame` names, for each property of the current row, the commit that set its current
value, as git blame does: walking first parents while the value stays, and at a merge
commit whose first parent had another value descending into the merged-in parent that
has the current value (parents in order), so the commit credited is the one that made
the change on its own branch, not the merge. A property is compared by name: one a
schema change renamed or added is credited to that schema change (unless a later
commit set it again).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlake.errors import RowNotFoundError, TypeMismatchError, UnknownTableError
from graphlake.schema.keys import key_string
from graphlake.timeline import walk
from graphlake.timeline.skip import RowSkip

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo


@dataclass(frozen=True)
class HistoryEntry:
    """One commit that changed the row: op insert / update / delete and, per changed
    property, (old, new)."""

    commit: str
    author: str
    time: str
    message: str
    op: str
    changes: dict[str, tuple[Any, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "author": self.author,
            "time": self.time,
            "message": self.message,
            "op": self.op,
            "changes": {p: {"old": o, "new": n} for p, (o, n) in self.changes.items()},
        }


@dataclass(frozen=True)
class BlameLine:
    """The commit that set `property` to its current `value`."""

    property: str
    value: Any
    commit: str
    author: str
    time: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "value": self.value,
            "commit": self.commit,
            "author": self.author,
            "time": self.time,
            "message": self.message,
        }


def author_text(commit: Commit) -> str:
    return commit.author_text


def target(repo: Repo, type_: str, key: Any, rev: str) -> tuple[Commit, str, str, str]:
    """(head commit, type name, table id, key text) of a history request; typed errors
    for an unknown revision, type or a key that cannot be one."""
    head = repo.resolve(rev)
    schema = repo.schemas.of(head)
    t = schema.table(type_)
    if t is None:
        raise UnknownTableError(
            f"unknown node or edge type {type_!r} (known: {', '.join(schema.table_names)})"
        )
    try:
        key_text = key_string(key)
    except TypeError as exc:
        raise TypeMismatchError(f"{t.name}: a key is a string or an integer: {exc}") from None
    return head, t.name, head.tables[t.name].table_id, key_text


def row_history(
    repo: Repo, type_: str, key: Any, rev: str = "main", limit: int | None = None
) -> list[HistoryEntry]:
    """The commits that changed row `key` of `type_`, newest first along the first
    parents of revision `rev`, at most `limit`. `RowNotFoundError` when none did."""
    if limit is not None and (isinstance(limit, bool) or limit < 1):
        raise ValueError(f"limit must be 1 or more, not {limit}")
    head, name, table_id, key_text = target(repo, type_, key, rev)
    out: list[HistoryEntry] = []
    skip = RowSkip(repo, table_id, key_text)
    for commit in walk.first_parents(repo, head):
        if not commit.parents or walk.table_name(commit, table_id) is None:
            break
        parent = repo.commits.get(commit.parents[0])
        if walk.table_name(parent, table_id) is None:
            break  # the type was created here: nothing older holds the row
        if skip.unchanged(parent, commit):
            continue
        changes = skip.changes(parent, commit)
        if changes is None:
            changes = walk.commit_changes(
                repo, commit, parent, table_ids={table_id}, keys={key_text}
            )
            skip.saw(parent, commit, changes)
        for change in changes:
            out.append(
                HistoryEntry(
                    commit.id,
                    author_text(commit),
                    commit.time,
                    commit.message,
                    change.op,
                    change.changes,
                )
            )
        if limit is not None and len(out) >= limit:
            break
    if not out:
        raise RowNotFoundError(
            f"{name} {key_text!r}: no commit on the first-parent history of {rev!r} holds this row"
        )
    return out


def blame(repo: Repo, type_: str, key: Any, rev: str = "main") -> list[BlameLine]:
    """Per property of the row at `rev` (schema order as stored), the commit that set
    its current value. `RowNotFoundError` when `rev` holds no such row."""
    head, name, table_id, key_text = target(repo, type_, key, rev)
    current = walk.row_at(repo, head, table_id, key_text)
    if current is None:
        raise RowNotFoundError(f"{name} {key_text!r} does not exist at {rev!r}")
    props = [p for p in current if p != "id"]
    found: dict[str, Commit] = {}
    todo: list[tuple[Commit, set[str]]] = [(head, set(props))]
    while todo:
        commit, pending = todo.pop()
        skip = RowSkip(repo, table_id, key_text)
        _follow(repo, commit, pending, current, table_id, key_text, found, todo, skip)
    return [
        BlameLine(
            p, current[p], found[p].id, author_text(found[p]), found[p].time, found[p].message
        )
        for p in props
    ]


def _follow(
    repo: Repo,
    commit: Commit,
    pending: set[str],
    current: dict[str, Any],
    table_id: str,
    key: str,
    found: dict[str, Commit],
    todo: list[tuple[Commit, set[str]]],
    skip: RowSkip,
) -> None:
    """Walk first parents from `commit` until every `pending` property is credited
    (to a commit here) or handed to a merged-in parent (pushed on `todo`)."""
    while pending:
        parent = repo.commits.get(commit.parents[0]) if commit.parents else None
        if parent is None or walk.table_name(parent, table_id) is None:
            changed = set(pending)
        elif skip.unchanged(parent, commit):
            changed = set()
        elif commit.schema_id != parent.schema_id:
            old = walk.row_at(repo, parent, table_id, key)
            changed = {p for p in pending if old is None or p not in old or old[p] != current[p]}
        else:
            changes = skip.changes(parent, commit)
            if changes is None:
                changes = walk.commit_changes(
                    repo, commit, parent, table_ids={table_id}, keys={key}
                )
                skip.saw(parent, commit, changes)
            if not changes:
                changed = set()
            elif changes[0].op == walk.INSERT:
                changed = set(pending)
            else:
                changed = pending & set(changes[0].changes)
        for other in commit.parents[1:] if parent is not None else ():
            if not changed:
                break
            merged = repo.commits.get(other)
            row = walk.row_at(repo, merged, table_id, key)
            same = {p for p in changed if row is not None and p in row and row[p] == current[p]}
            if same:
                todo.append((merged, same))
                changed -= same
                pending = pending - same
        for p in changed:
            found[p] = commit
        pending = pending - changed
        if parent is None:
            return
        commit = parent
