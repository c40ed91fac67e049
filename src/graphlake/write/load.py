"""`Graph.load`: JSONL records, Parquet files or Arrow data, published as one commit.

JSONL, one object a line:
  {"type": "Person", "data": {...}}                                   a node
  {"edge": "Knows", "from": "Bob", "to": "Carol", "data": {...}}      an edge ("id" optional)
Parquet, CSV (a header line; pyarrow's CSV reader) and Arrow input name their table with
`table=` and go through the same checks. A value JSONL records fail on is reported with
its place: `big.jsonl:3778: Person 'B3777': age: expected I32, got 'x'`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from graphlake.errors import DataError, GraphLakeError, LoadFormatError, UnknownTableError
from graphlake.schema.model import NodeType
from graphlake.write.coerce import coerce
from graphlake.write.jsonl import parse_json_line
from graphlake.write.transaction import Transaction

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.repo import Repo
    from graphlake.schema.model import EdgeType, Schema

MODES = {"append": "insert", "merge": "upsert", "overwrite": "overwrite"}
Progress = Callable[[int], None]
CHUNK_ROWS = 8192  # JSONL rows of one group turned into Arrow at a time


def load(
    repo: Repo,
    source: Any,
    *,
    branch: str,
    mode: str,
    table: str | None,
    message: str | None,
    progress: Progress | None = None,
    coerce: bool = False,
) -> Commit:
    if mode not in MODES:
        raise DataError(f"unknown load mode {mode!r} (use one of: {', '.join(MODES)})")
    repo.branch_ref(branch)  # an unknown branch fails before any parsing
    tables = _read_source(repo, source, table, progress)
    if isinstance(tables, _Records):
        # Records are checked against the schema in force on the branch being loaded.
        staged = _coerced_chunks(repo.schema_at(branch), tables, mode, progress, coerce)
    else:
        staged = _staged(repo, tables, mode)
    txn = Transaction(repo, branch, message or f"load ({mode})")
    for name, kind, rows in staged:
        getattr(txn, kind)(name, rows, coerce=coerce)
    return txn.commit_now()


def _staged(repo: Repo, tables: dict[str, Any], mode: str) -> list[tuple[str, str, Any]]:
    """(table, transaction method, rows) for Arrow, pandas or Parquet input."""
    return [(name, MODES[mode], rows) for name, rows in tables.items()]


@dataclass(frozen=True)
class _Records:
    """JSONL records, read lazily: `(line or record number, record)`."""

    items: Iterable[tuple[int, Any]]
    path: str | None


def _read_source(
    repo: Repo, source: Any, table: str | None, progress: Progress | None
) -> dict[str, Any] | _Records:
    if isinstance(source, pa.Table | pa.RecordBatch) or _is_frame(source):
        if table is None:
            raise DataError("loading Arrow or pandas data needs a table (table= / --table)")
        return {table: source}
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.exists():
            raise LoadFormatError("no such file", path=str(path))
        if not path.is_file():
            raise LoadFormatError("not a file", path=str(path))
        if path.suffix.lower() in (".parquet", ".pq"):
            if table is None:
                raise DataError(f"loading {path} needs a table (table= / --table)")
            try:
                data = pq.read_table(path)
            except (pa.ArrowInvalid, OSError) as exc:
                raise LoadFormatError(
                    f"not a readable Parquet file: {exc}", path=str(path)
                ) from None
            if progress:
                progress(data.num_rows)
            return {table: data}
        if path.suffix.lower() == ".csv":
            return {_csv_table(path, table): _read_csv(path, progress)}
        _no_table(table, str(path))
        return _Records(_jsonl_lines(path), str(path))
    if isinstance(source, Iterable):
        _no_table(table, "records")
        return _Records(((i + 1, r) for i, r in enumerate(source)), None)
    raise DataError(f"cannot load from a {type(source).__name__}")


def _csv_table(path: Path, table: str | None) -> str:
    if table is None:
        raise DataError(
            f"loading {path} needs a table (table= / --table): a CSV file "
            f"holds the rows of one node or edge type"
        )
    return table


def _read_csv(path: Path, progress: Progress | None) -> pa.Table:
    """A CSV file with a header line, read by pyarrow's CSV reader. Its inferred column
    types then meet the same strict checks as any Arrow input (text where an `I32` is
    declared is refused; `coerce=True` casts)."""
    try:
        data = pacsv.read_csv(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LoadFormatError(f"not a readable CSV file: {exc}", path=str(path)) from None
    if progress:
        progress(data.num_rows)
    return data


def _no_table(table: str | None, what: str) -> None:
    if table is not None:
        raise DataError(
            f"{what}: a table (table= / --table) applies to Parquet or Arrow input only; "
            f"JSONL records name their own type"
        )


def _is_frame(obj: Any) -> bool:
    return type(obj).__module__.startswith("pandas")


def _jsonl_lines(path: Path) -> Iterable[tuple[int, Any]]:
    try:
        with path.open("r", encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                yield n, parse_json_line(line, str(path), n)
    except UnicodeDecodeError:
        # Decoding runs a buffer ahead of the lines, so no line number is reliable here.
        raise LoadFormatError("not valid UTF-8 text", path=str(path)) from None


def group_records(
    schema: Schema,
    records: Iterable[tuple[int, Any]],
    path: str | None,
    progress: Progress | None,
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    count = 0
    for n, rec in records:
        t, row = _typed_record(schema, rec, path, n)
        out.setdefault(t.name, []).append(row)
        count += 1
        if progress and count % 10_000 == 0:
            progress(10_000)
    if progress and count % 10_000:
        progress(count % 10_000)
    # Nodes before edges keeps error messages about endpoints in a natural order.
    return {n: out[n] for n in (*schema.nodes, *schema.edges) if n in out}


def _typed_record(
    schema: Schema, rec: Any, path: str | None, n: int
) -> tuple[NodeType | EdgeType, dict[str, Any]]:
    name, row = parse_record(rec, path, n)
    t = schema.table(name)
    if t is None or t.is_edge != ("src" in row):
        kind = "edge type" if "src" in row else "node type"
        raise UnknownTableError(f"{path + ':' if path else 'record '}{n}: unknown {kind} {name!r}")
    return t, row


def _coerced_chunks(
    schema: Schema, records: _Records, mode: str, progress: Progress | None, cast: bool
) -> list[tuple[str, str, pa.Table]]:
    """JSONL records as Arrow tables of at most `CHUNK_ROWS` rows, ready to stage.

    Rows become Arrow (the transaction's own coercion) every `CHUNK_ROWS` rows of a group,
    so memory holds Arrow data plus one chunk of dicts per group, never every record as
    a dict. Groups: the table and the transaction method, and under `merge` the set of
    given properties (absent means "not provided", as `Transaction.upsert` groups them).
    """
    pending: dict[_Group, list[dict[str, Any]]] = {}
    lines: dict[_Group, list[int]] = {}
    done: dict[_Group, list[pa.Table]] = {}

    def flush(group: _Group) -> None:
        t = schema.require(group[0])
        rows, numbers = pending.pop(group), lines.pop(group)
        partial = group[1] == "upsert"
        try:
            chunk = coerce(t, rows, partial=partial, cast=cast)
        except GraphLakeError as exc:
            raise _located(exc, t, rows, numbers, records.path, partial, cast) from None
        done.setdefault(group, []).append(chunk)

    count = 0
    for n, rec in records.items:
        t, row = _typed_record(schema, rec, records.path, n)
        group = _group_of(t, row, mode)
        bucket = pending.setdefault(group, [])
        bucket.append(row)
        lines.setdefault(group, []).append(n)
        if len(bucket) >= CHUNK_ROWS:
            flush(group)
        count += 1
        if progress and count % 10_000 == 0:
            progress(10_000)
    if progress and count % 10_000:
        progress(count % 10_000)
    for group in list(pending):
        flush(group)
    return _in_table_order(schema, done)


_Group = tuple[str, str, tuple[str, ...]]  # table, transaction method, given properties


def _located(
    exc: GraphLakeError,
    t: NodeType | EdgeType,
    rows: list[dict[str, Any]],
    numbers: list[int],
    path: str | None,
    partial: bool,
    cast: bool,
) -> GraphLakeError:
    """`exc` (a chunk failed to convert) reworded to name the first failing record:
    `big.jsonl:3778: Person 'B3777': age: expected I32, got 'x'`. Only on the error
    path: each row of the chunk is converted alone until one fails."""
    failed = None
    for i, row in enumerate(rows):
        try:
            coerce(t, [row], partial=partial, cast=cast)
        except GraphLakeError as one:
            exc, failed = one, i
            break
    if failed is None:
        return exc  # the chunk fails but no row alone does: no single place to name
    row, n = rows[failed], numbers[failed]
    message = str(exc)
    where = f"{path}:{n}" if path is not None else f"record {n}"
    if message.startswith(f"{t.name}: "):  # it names the row already
        exc.args = (f"{where}: {message}",)
        return exc
    if message.startswith(f"{t.name}."):
        message = message[len(t.name) + 1 :]
    exc.args = (f"{where}: {t.name} {_row_name(t, row)}: {message}",)
    return exc


def _row_name(t: NodeType | EdgeType, row: dict[str, Any]) -> str:
    """A node's key, an edge's id or its endpoints, as the user wrote them."""
    if isinstance(t, NodeType):
        return repr(row.get(t.key))
    if row.get("id") is not None:
        return repr(row["id"])
    return f"{row.get('src')!r} -> {row.get('dst')!r}"


def _group_of(t: NodeType | EdgeType, row: dict[str, Any], mode: str) -> _Group:
    if mode != "merge":
        return t.name, MODES[mode], ()
    if t.is_edge and row.get("id") is None:
        # An edge without an id cannot match an existing edge: it is a new edge.
        return t.name, "insert", ()
    return t.name, "upsert", tuple(sorted(row))


def _in_table_order(
    schema: Schema, done: dict[_Group, list[pa.Table]]
) -> list[tuple[str, str, pa.Table]]:
    # Nodes before edges keeps error messages about endpoints in a natural order.
    order = {name: i for i, name in enumerate((*schema.nodes, *schema.edges))}
    out: list[tuple[str, str, pa.Table]] = []
    for group in sorted(done, key=lambda g: order[g[0]]):  # stable: first-seen groups first
        name, kind, _ = group
        if kind == "overwrite":  # one operation, or the last chunk would replace the rest
            out.append((name, kind, pa.concat_tables(done[group])))
        else:
            out += [(name, kind, chunk) for chunk in done[group]]
    return out


def parse_record(rec: Any, path: str | None, n: int) -> tuple[str, dict[str, Any]]:
    def bad(msg: str) -> LoadFormatError:
        return LoadFormatError(msg, path=path, line=n)

    if not isinstance(rec, Mapping):
        raise bad("a record must be a JSON object")
    data = rec.get("data", {})
    if not isinstance(data, Mapping):
        raise bad('"data" must be an object')
    if "type" in rec:
        extra = set(rec) - {"type", "data"}
        if extra:
            raise bad(f"unexpected field(s) {sorted(extra)} in a node record")
        return str(rec["type"]), dict(data)
    if "edge" in rec:
        extra = set(rec) - {"edge", "from", "to", "data", "id"}
        if extra:
            raise bad(f"unexpected field(s) {sorted(extra)} in an edge record")
        if "from" not in rec or "to" not in rec:
            raise bad('an edge record needs "from" and "to"')
        row = {**data, "src": rec["from"], "dst": rec["to"]}
        if "id" in rec:
            row["id"] = rec["id"]
        return str(rec["edge"]), row
    raise bad('a record needs "type" (a node) or "edge" (an edge)')
