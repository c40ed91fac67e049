"""Input files of an ingest: which files, their format, a header check, their row counts.

Parquet row counts come from the file metadata (nothing else is read). A JSONL file is
counted in *lines* (blank lines included): one sequential pass that counts newlines, notes
the byte offset and line number at the start of every 8 MiB chunk (a sparse index, so
the byte offset of any line is found by scanning at most one chunk), and notes whether
the file holds node records, edge records or both.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from graphlake.errors import DataError, LoadFormatError, UnknownTableError
from graphlake.write.coerce import coerce
from graphlake.write.jsonl import parse_json_line
from graphlake.write.load import parse_record

if TYPE_CHECKING:
    from graphlake.schema.model import EdgeType, NodeType, Schema

Format = Literal["parquet", "jsonl"]
PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
CHUNK_BYTES = 8 * 2**20
_EDGE_TOKEN = b'"edge"'
_NODE_TOKEN = b'"type"'


@dataclass(frozen=True)
class InputFile:
    """One input file as the plan records it. `rows`: Parquet rows or JSONL lines."""

    path: str
    format: Format
    size: int
    mtime_ns: int
    rows: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InputFile:
        return cls(
            str(data["path"]),
            data["format"],
            int(data["size"]),
            int(data["mtime_ns"]),
            int(data["rows"]),
        )

    def unchanged(self) -> bool:
        """Same size and modification time as when the plan was made."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return st.st_size == self.size and st.st_mtime_ns == self.mtime_ns


@dataclass(frozen=True)
class JsonlScan:
    """What one pass over a JSONL file found."""

    lines: int
    has_nodes: bool
    has_edges: bool
    index: tuple[tuple[int, int], ...]  # (byte offset, line number) at chunk starts


# --- which files ------------------------------------------------------------------------


def input_paths(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The input files, absolute and in order: a file, a directory of files, or a list."""
    if isinstance(sources, str | os.PathLike):
        items = [sources]
    elif isinstance(sources, Sequence) and not isinstance(sources, bytes):
        items = list(sources)
    else:
        raise DataError(f"ingest takes a path or a list of paths, not {type(sources).__name__}")
    if not items:
        raise DataError("ingest needs at least one input file")
    paths: list[Path] = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise DataError(f"an input must be a path, not {type(item).__name__}")
        path = Path(item).expanduser().absolute()
        if path.is_dir():
            paths.extend(_directory_files(path))
        elif path.is_file():
            paths.append(path)
        elif path.exists():
            raise LoadFormatError("not a file or directory", path=str(path))
        else:
            raise LoadFormatError("no such file", path=str(path))
    seen: set[Path] = set()
    for path in paths:
        real = path.resolve()
        if real in seen:
            raise DataError(f"{path} is given twice; its rows would be loaded twice")
        seen.add(real)
    return paths


def _directory_files(folder: Path) -> list[Path]:
    """Data files directly in `folder`, sorted by name; hidden and `_`-prefixed files (like
    `_SUCCESS`) are skipped. Subfolders are refused rather than silently ignored."""
    files: list[Path] = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith((".", "_")):
            continue
        if child.is_dir():
            raise LoadFormatError(
                f"holds a subfolder; pass its files or folders explicitly ({child.name})",
                path=str(folder),
            )
        if child.suffix.lower() in PARQUET_SUFFIXES + JSONL_SUFFIXES:
            files.append(child)
    if not files:
        raise LoadFormatError(
            f"no data files ({', '.join(PARQUET_SUFFIXES + JSONL_SUFFIXES)}) in this folder",
            path=str(folder),
        )
    return files


def file_format(path: Path) -> Format:
    """Parquet by suffix; anything else is read as JSONL (as `Graph.load` does)."""
    return "parquet" if path.suffix.lower() in PARQUET_SUFFIXES else "jsonl"


def common_format(paths: Sequence[Path]) -> Format:
    formats = {file_format(p) for p in paths}
    if len(formats) > 1:
        raise DataError("ingest one format per run: the inputs mix Parquet and JSONL files")
    return formats.pop()


def stat_file(path: Path, fmt: Format, rows: int) -> InputFile:
    st = path.stat()
    return InputFile(str(path), fmt, st.st_size, st.st_mtime_ns, rows)


# --- Parquet ----------------------------------------------------------------------------


def open_parquet(path: str | Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadFormatError(f"not a readable Parquet file: {exc}", path=str(path)) from None


def check_parquet(path: Path, t: NodeType | EdgeType) -> int:
    """The file's row count; its schema and first row are checked against the table."""
    pf = open_parquet(path)
    try:
        first = next(pf.iter_batches(batch_size=1), None)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadFormatError(f"not a readable Parquet file: {exc}", path=str(path)) from None
    sample = pa.Table.from_batches([first]) if first is not None else pf.schema_arrow.empty_table()
    try:
        coerce(t, sample, partial=False)
    except DataError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    return int(pf.metadata.num_rows)


# --- JSONL ------------------------------------------------------------------------------


def check_jsonl_header(schema: Schema, path: Path) -> bool:
    """The first non-blank line must be a valid record of a known node or edge type.
    False when the file holds no record at all (only blank lines)."""
    with path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            rec = parse_json_line(raw, str(path), n)
            name, row = parse_record(rec, str(path), n)
            t = schema.table(name)
            if t is None or t.is_edge != ("src" in row):
                kind = "edge type" if "src" in row else "node type"
                raise UnknownTableError(f"{path}:{n}: unknown {kind} {name!r}")
            return True
    return False


def scan_jsonl(path: Path) -> JsonlScan:
    """Count lines (a last line without a newline counts too) and note record kinds."""
    lines = 0
    pos = 0
    index: list[tuple[int, int]] = []
    has_nodes = has_edges = False
    tail = b""
    last = b"\n"
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            index.append((pos, lines))
            lines += chunk.count(b"\n")
            window = tail + chunk
            has_nodes = has_nodes or _NODE_TOKEN in window
            has_edges = has_edges or _EDGE_TOKEN in window
            tail = chunk[-(len(_EDGE_TOKEN) - 1) :]
            pos += len(chunk)
            last = chunk[-1:]
    if last != b"\n":
        lines += 1
    return JsonlScan(lines, has_nodes, has_edges, tuple(index))


def line_offsets(path: Path, scan: JsonlScan, wanted: Sequence[int]) -> dict[int, int]:
    """Byte offset of the start of each line number in `wanted` (0-based; `scan.lines`
    maps to the file size)."""
    size = path.stat().st_size
    out: dict[int, int] = {}
    with path.open("rb") as f:
        for line in sorted(set(wanted)):
            if line >= scan.lines:
                out[line] = size
                continue
            if line == 0:
                out[line] = 0
                continue
            # The last chunk start with fewer newlines before it than `line`: that chunk
            # (or an earlier one) holds the start of the line.
            start, at = max(e for e in scan.index if e[1] < line)
            if start > 0:
                f.seek(start - 1)
                if f.read(1) != b"\n":  # mid-line: skip to the next line start
                    f.readline()
                    at += 1
            else:
                f.seek(0)
            while at < line:
                f.readline()
                at += 1
            out[line] = f.tell()
    return out
