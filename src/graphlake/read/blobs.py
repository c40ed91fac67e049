"""Lazy Blob values: a small, picklable handle per row that reads its bytes when asked.

A scan or reader asked for a Blob column with `blobs="lazy"` gives, per row, a `BlobRef`
instead of the bytes: the pinned table state (graph root, table, Lance branch and
version), the column and the row's stable row id. `ref.read()` reads that one value;
`read_blobs(refs)` reads a whole batch of handles with one Lance take per table state
(`LanceDataset._take_rows` by stable row id, projecting only the Blob column), which is
how a training loop should resolve them. Handles pickle to a few hundred bytes (refs
that share one `BlobSource` pickle it once), so DataLoader workers and Ray tasks can
resolve them in other processes; each process opens the graph root once and caches it.

A handle names an exact table state, so it reads the bytes `g.get` returns at the
scan's commit, whatever later writes, merges, branch deletions or `gc` runs do, *as
long as the scan's read lease is live* (or the commit is still reachable): the process
that made the scan holds the lease; handles do not hold one of their own. After the
lease ends and `gc` removes the state, `read()` raises `ReaderError`.

Storage: graphlake keeps Blob as plain `large_binary`, not Lance's blob encoding (see
`graphlake.schema.arrow`): blob-encoded columns scan as descriptors that DuckDB refuses
(`SELECT *` fails) and that cannot be written back by a row rewrite. So a handle has no
cheap size (Lance's descriptors carry one; plain binary does not): `len()` is not
offered; read the bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from graphlake.errors import ReaderError, clean_message
from graphlake.repo import Repo

if TYPE_CHECKING:
    import lance

    from graphlake.catalog.commits import TableState

__all__ = ["BLOB_MODES", "BlobMode", "BlobRef", "BlobSource", "check_blob_mode", "read_blobs"]

BlobMode = Literal["lazy", "bytes"]
BLOB_MODES: tuple[str, ...] = ("lazy", "bytes")


def check_blob_mode(blobs: object, columns: Iterable[str] = ()) -> BlobMode:
    """`blobs` if it is a known mode, else `ReaderError` naming the Blob columns asked for."""
    if blobs == "lazy" or blobs == "bytes":
        return blobs
    named = list(columns)
    which = f"Blob column {', '.join(map(repr, named))}" if named else "a Blob column"
    raise ReaderError(
        f"{which} is read as blobs='lazy' (BlobRef handles, read on demand) or "
        f"blobs='bytes' (bytes per row), not blobs={blobs!r}: a blob cannot be a tensor"
    )


@dataclass(frozen=True)
class BlobSource:
    """One Blob column of one pinned table state (what a batch of handles shares)."""

    uri: str
    storage_options: tuple[tuple[str, str], ...] | None
    table: str
    state: TableState
    column: str

    def read(self, row_ids: list[int]) -> list[bytes | None]:
        """The column's values for `row_ids` (stable row ids of the pinned state), in order;
        None for a null blob."""
        if not row_ids:
            return []
        where = f"{self.table}.{self.column} at {self.state.lance_branch}@{self.state.version}"
        try:
            ds = _dataset(self)
            taken = ds._take_rows(row_ids, columns=[self.column, "_rowid"])
        except (OSError, ValueError, RuntimeError) as exc:
            raise ReaderError(
                f"cannot read blobs of {where} (was the scan's read lease released and the "
                f"state collected by gc?): {clean_message(exc)}"
            ) from None
        got = dict(
            zip(
                taken.column("_rowid").to_pylist(),
                taken.column(self.column).to_pylist(),
                strict=True,
            )
        )
        missing = [r for r in row_ids if r not in got]
        if missing:
            raise ReaderError(f"{where} has no row id {missing[0]} (not a handle of this state)")
        return [got[r] for r in row_ids]


@dataclass(frozen=True)
class BlobRef:
    """A lazy Blob value: `read()` gives the bytes (None for a null blob)."""

    source: BlobSource
    row_id: int

    def read(self) -> bytes | None:
        return self.source.read([self.row_id])[0]

    def __repr__(self) -> str:
        s = self.source
        return (
            f"BlobRef({s.table}.{s.column} row {self.row_id} at "
            f"{s.state.lance_branch}@{s.state.version})"
        )


def read_blobs(refs: Iterable[BlobRef | None]) -> list[bytes | None]:
    """The bytes of every handle, in order (None stays None): one Lance take per source."""
    refs = list(refs)
    groups: dict[BlobSource, list[int]] = {}
    for ref in refs:
        if ref is not None:
            if not isinstance(ref, BlobRef):
                raise ReaderError(f"read_blobs takes BlobRef handles, not {type(ref).__name__}")
            groups.setdefault(ref.source, []).append(ref.row_id)
    values: dict[tuple[BlobSource, int], bytes | None] = {}
    for source, ids in groups.items():
        unique = list(dict.fromkeys(ids))
        values.update(zip(((source, r) for r in unique), source.read(unique), strict=True))
    return [None if r is None else values[(r.source, r.row_id)] for r in refs]


# --- one Repo per graph root per process (a worker opens the root once) ----------------

_repos: dict[tuple[str, tuple[tuple[str, str], ...] | None], Repo] = {}
_repos_lock = threading.Lock()


def _dataset(source: BlobSource) -> lance.LanceDataset:

    key = (source.uri, source.storage_options)
    with _repos_lock:
        repo = _repos.get(key)
        if repo is None:
            options = None if source.storage_options is None else dict(source.storage_options)
            repo = _repos[key] = Repo(source.uri, options)
    return repo.tables.open(source.state)  # cached per state by the TableStore
