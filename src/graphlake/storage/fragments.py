"""Lance fragments: what identifies their rows, which ones a state added to another, and
reading those rows one column at a time."""

from __future__ import annotations

import lance
import pyarrow as pa
from lance.fragment import FragmentMetadata


def signature(meta: FragmentMetadata) -> tuple:
    """What identifies a fragment's content, without base ids: a fork refers to its
    parent's files through a base, the parent through its own root; file names are
    unique, so the same names (and deletion file) mean the same rows. Read from the
    attributes: `to_json` deep-copies and costs ~0.3 ms a fragment."""
    d = meta.deletion_file
    deletion = None if d is None else (d.read_version, d.id, d.num_deleted_rows, d.file_type)
    files = tuple((f.path, tuple(f.fields), tuple(f.column_indices)) for f in meta.files)
    overlays = getattr(meta, "overlays", None)
    return files, meta.physical_rows, deletion, repr(overlays) if overlays else None


def appended_fragments(
    before: lance.LanceDataset, after: lance.LanceDataset
) -> list[lance.LanceFragment] | None:
    """`after`'s fragments that `before` lacks, when `after` is `before` plus whole new
    fragments: every fragment of `before` is still there, unchanged (no row deleted,
    rewritten or given a new column). None otherwise. Manifest metadata only."""
    kept = {f.fragment_id: signature(f.metadata) for f in before.get_fragments()}
    new: list[lance.LanceFragment] = []
    for frag in after.get_fragments():
        sig = kept.pop(frag.fragment_id, None)
        if sig is None:
            new.append(frag)
        elif sig != signature(frag.metadata):
            return None  # an existing fragment changed
    return None if kept else new  # a fragment of `before` is gone


class Rows:
    """Rows read column by column on demand: `read(["id"])` of a million inserted rows
    costs their keys, not their vectors. This base holds an Arrow table already read."""

    def __init__(self, table: pa.Table) -> None:
        self._full: pa.Table | None = table

    @property
    def num_rows(self) -> int:
        assert self._full is not None
        return self._full.num_rows

    def read(self, columns: list[str] | None = None) -> pa.Table:
        """The rows with `columns` (all when None), in one fixed order."""
        full = self._read_all() if self._full is None else self._full
        return full if columns is None else full.select(columns)

    def _read_all(self) -> pa.Table:
        raise NotImplementedError


class FragmentRows(Rows):
    """The live rows of some fragments of one dataset state."""

    def __init__(self, ds: lance.LanceDataset, fragments: list[lance.LanceFragment]) -> None:
        self._full = None
        self._ds = ds
        self._fragments = fragments
        self._num_rows = sum(f.count_rows() for f in fragments)  # deletion files only
        self._columns: dict[str, pa.ChunkedArray] = {}

    @property
    def num_rows(self) -> int:
        return self._num_rows

    def read(self, columns: list[str] | None = None) -> pa.Table:
        if columns is None or self._full is not None:
            return super().read(columns)
        missing = [c for c in columns if c not in self._columns]
        if missing:
            got = self._scan(missing)
            self._columns.update({c: got.column(c) for c in missing})
        return pa.table({c: self._columns[c] for c in columns})

    def _read_all(self) -> pa.Table:
        self._full = self._scan(None)
        self._columns.clear()
        return self._full

    def _scan(self, columns: list[str] | None) -> pa.Table:
        if not self._fragments:
            schema = self._ds.schema
            return (
                schema if columns is None else pa.schema([schema.field(c) for c in columns])
            ).empty_table()
        return self._ds.scanner(
            columns=columns, fragments=self._fragments, scan_in_order=True
        ).to_table()
