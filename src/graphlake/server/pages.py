"""Cursor pagination of a table read, ordered by `id`, over one pinned commit.

The first page pins the commit the branch points at; the cursor carries that commit id,
the last id returned and a digest of the query (branch, table, filter, columns), so every
page comes from the same snapshot and a cursor cannot be replayed against another query.
Each page finds the next `limit` ids among the matching ones (reading only the `id`
column and the filter's columns), then reads the requested columns of those rows only.
That costs O(matching rows) per page in ids read: fine for API pages, not a bulk export.

A page also stops at `max_bytes` (Arrow bytes; the server passes `sql_max_result_bytes`):
its rows are read in id order, a chunk at a time, and a page that would pass the budget
ends early with a `next_cursor` after its last row. A single row over the budget is a
413 (`ResultTooLarge`) naming its id: read fewer columns.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlake.catalog.commits import is_commit_id
from graphlake.errors import UnknownPropertyError
from graphlake.graph import Graph
from graphlake.server.errors import ApiError

if TYPE_CHECKING:
    import pyarrow as pa

_VERSION = 1


@dataclass(frozen=True)
class Cursor:
    commit: str
    after: str
    query: str  # digest of branch, table, filter and columns

    def encode(self) -> str:
        raw = json.dumps(
            {"v": _VERSION, "c": self.commit, "a": self.after, "q": self.query},
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            padded = token + "=" * (-len(token) % 4)
            obj = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            cursor = cls(commit=obj["c"], after=obj["a"], query=obj["q"])
            valid = (
                obj.get("v") == _VERSION
                and is_commit_id(cursor.commit)
                and isinstance(cursor.after, str)
                and isinstance(cursor.query, str)
            )
        except (ValueError, UnicodeError, binascii.Error, KeyError, TypeError):
            valid = False
        if not valid:
            raise ApiError(400, "InvalidCursorError", "the cursor is not one this server issued")
        return cursor


@dataclass(frozen=True)
class PageResult:
    commit: str
    rows: pa.Table
    next_cursor: str | None


def query_digest(branch: str, table: str, where: str | None, columns: Sequence[str] | None) -> str:
    text = json.dumps([branch, table, where, list(columns) if columns is not None else None])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_page(
    graph: Graph,
    branch: str,
    table: str,
    *,
    where: str | None,
    columns: Sequence[str] | None,
    limit: int,
    cursor: str | None,
    max_bytes: int | None = None,
) -> PageResult:
    digest = query_digest(branch, table, where, columns)
    if cursor is not None:
        state = Cursor.decode(cursor)
        if state.query != digest:
            raise ApiError(
                400,
                "InvalidCursorError",
                "the cursor belongs to a different query (branch, table, where or columns)",
            )
        # By id, never by name: a branch may be called like a commit id.
        commit, after = graph.repo.commits.get(state.commit), state.after
    else:
        commit, after = graph.resolve(branch), None
    commit_id = commit.id
    import pyarrow as pa  # see app.py: the data stack is imported on use

    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow.compute as pc

    # on first use only: loads lance, pyarrow, lark (start-up time)
    from graphlake.read.snapshot import Snapshot

    snapshot = Snapshot(graph.repo, commit)
    # Validates the table and the filter; reads the id column (and what the filter needs).
    ids = snapshot.read(table, None, where, ["id"], order_by=None).column("id")
    ds = snapshot.dataset(snapshot.type(table).name)
    wanted = _columns(table, ds.schema.names, columns)
    if after is not None:
        ids = ids.filter(pc.greater(ids, pa.scalar(after, pa.string())))
    # The next limit+1 ids in order: one more than a page tells whether another follows.
    # Python orders str by code point, which is the UTF-8 byte order Arrow compares in.
    k = min(limit + 1, len(ids))
    nearest = sorted(ids.take(pc.bottom_k_unstable(ids, k=k)).to_pylist()) if k else []
    page_ids, more = nearest[:limit], len(nearest) > limit
    if page_ids:
        read_cols = wanted if "id" in wanted else ["id", *wanted]
        rows = _read_rows(ds, read_cols, page_ids, max_bytes)
        if rows.num_rows < len(page_ids):  # the byte budget ended the page early
            page_ids, more = page_ids[: rows.num_rows], True
        if "id" not in wanted:
            rows = rows.select(wanted)
    else:
        rows = pa.schema([ds.schema.field(c) for c in wanted]).empty_table()
    next_cursor = None
    if more:
        next_cursor = Cursor(commit_id, page_ids[-1], digest).encode()
    return PageResult(commit_id, rows, next_cursor)


FIRST_CHUNK = 100  # ids read at once first; later chunks follow the bytes per row seen


def _read_rows(ds: Any, columns: list[str], ids: list[str], max_bytes: int | None) -> pa.Table:
    """The rows of `ids` (sorted), in id order, stopping before they pass `max_bytes`."""
    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow as pa

    # on first use only: loads pyarrow, numpy (start-up time)
    import pyarrow.compute as pc

    def read(chunk: list[str]) -> pa.Table:
        return ds.to_table(columns=columns, filter=pc.field("id").isin(chunk)).sort_by("id")

    if max_bytes is None:
        return read(ids)
    parts: list[pa.Table] = []
    used, done, n = 0, 0, FIRST_CHUNK
    while done < len(ids):
        chunk = read(ids[done : done + n])
        if used + chunk.nbytes > max_bytes:
            fit = _rows_within(chunk, max_bytes - used)
            if fit == 0 and not parts:
                raise ApiError(
                    413,
                    "ResultTooLarge",
                    f"the row {ids[done]!r} is larger than {max_bytes} bytes (the limit "
                    "sql_max_result_bytes): read fewer columns (`columns=`)",
                )
            parts.append(chunk.slice(0, fit))
            break
        parts.append(chunk)
        used += chunk.nbytes
        done += chunk.num_rows
        per_row = max(1, used // max(done, 1))
        n = max(1, min(2 * n, (max_bytes - used) // per_row))
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _rows_within(chunk: pa.Table, budget: int) -> int:
    """How many leading rows of `chunk` fit in `budget` bytes."""
    used = 0
    for i in range(chunk.num_rows):
        used += chunk.slice(i, 1).nbytes
        if used > budget:
            return i
    return chunk.num_rows


def _columns(table: str, names: Sequence[str], columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        return list(names)
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise UnknownPropertyError(
            f"{table} has no column {', '.join(map(repr, unknown))} (columns: {', '.join(names)})"
        )
    return list(columns)
