"""`Graph.load`: JSONL records, Parquet files or Arrow data, published as one commit.

JSONL, one object a line:
  {"type": "Person", "data": {...}}                                   a node
  {"edge": "Knows", "from": "Bob", "to": "Carol", "data": {...}}      an edge ("id" optional)
Parquet and Arrow input name their table with `table=` and go through the same checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from graphlake.errors import DataError, LoadFormatError, UnknownTableError
from graphlake.write.jsonl import parse_json_line

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.graph import Graph

MODES = {"append": "insert", "merge": "upsert", "overwrite": "overwrite"}
Progress = Callable[[int], None]


def load(
    graph: Graph,
    source: Any,
    *,
    branch: str,
    mode: str,
    table: str | None,
    message: str | None,
    progress: Progress | None = None,
) -> Commit:
    if mode not in MODES:
        raise DataError(f"unknown load mode {mode!r} (use one of: {', '.join(MODES)})")
    graph._ref(branch)  # an unknown branch fails before any parsing
    tables = _read_source(graph, source, table, progress)
    txn = graph.write(branch, message or f"load ({mode})")
    stage = getattr(txn, MODES[mode])
    for name, rows in tables.items():
        if mode == "merge" and isinstance(rows, list) and graph.schema.edges.get(name):
            # An edge without an id cannot match an existing edge: it is a new edge.
            new = [r for r in rows if r.get("id") is None]
            if new:
                txn.insert(name, new)
            rows = [r for r in rows if r.get("id") is not None]
            if not rows:
                continue
        stage(name, rows)
    return txn.commit_now()


def _read_source(
    graph: Graph, source: Any, table: str | None, progress: Progress | None
) -> dict[str, Any]:
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
                raise LoadFormatError(f"not a readable Parquet file: {exc}",
                                      path=str(path)) from None
            if progress:
                progress(data.num_rows)
            return {table: data}
        _no_table(table, str(path))
        return _group_records(graph, _jsonl_lines(path), str(path), progress)
    if isinstance(source, Iterable):
        _no_table(table, "records")
        records = ((i + 1, r) for i, r in enumerate(source))
        return _group_records(graph, records, None, progress)
    raise DataError(f"cannot load from a {type(source).__name__}")


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


def _group_records(
    graph: Graph,
    records: Iterable[tuple[int, Any]],
    path: str | None,
    progress: Progress | None,
) -> dict[str, list[dict[str, Any]]]:
    schema = graph.schema
    out: dict[str, list[dict[str, Any]]] = {}
    count = 0
    for n, rec in records:
        name, row = _record(rec, path, n)
        t = schema.table(name)
        if t is None or t.is_edge != ("src" in row):
            kind = "edge type" if "src" in row else "node type"
            raise UnknownTableError(
                f"{path + ':' if path else 'record '}{n}: unknown {kind} {name!r}"
            )
        out.setdefault(name, []).append(row)
        count += 1
        if progress and count % 10_000 == 0:
            progress(10_000)
    if progress and count % 10_000:
        progress(count % 10_000)
    # Nodes before edges keeps error messages about endpoints in a natural order.
    return {n: out[n] for n in (*schema.nodes, *schema.edges) if n in out}


def _record(rec: Any, path: str | None, n: int) -> tuple[str, dict[str, Any]]:
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
