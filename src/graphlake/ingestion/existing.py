"""Keys of the input that the target has already, found before any worker starts.

Workers insert: a key the target holds already fails the shard that carries it, but only
at that shard's first commit, after it has read (by default) a whole batch, and after
every other shard did its work. So a fresh run reads the input's keys first and refuses
at once, naming them, when the target holds any (re-ingesting a file is the usual cause).

Only tables the target holds rows of are looked up, and only keys are read: nothing is
paid for an ingest into empty tables, which is the common first load. Parquet is read
one key column at a time; JSONL records are parsed for their type and key alone. Edges
without an explicit id get fresh ids, so they never collide.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from graphlake.errors import DuplicateKeyError
from graphlake.ingestion.sources import Format, open_parquet
from graphlake.schema.keys import key_string
from graphlake.schema.model import NodeType, Schema
from graphlake.storage.lookup import rows_where_in
from graphlake.write.jsonl import parse_json_line
from graphlake.write.load import parse_record

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.graph import Graph

SHOWN = 5
_BATCH = 256 * 1024  # keys looked up per probe of the target


def refuse_existing_keys(
    graph: Graph, head: Commit, fmt: Format, paths: Sequence[Path], table: str | None, into: str
) -> None:
    """Raise `DuplicateKeyError` if any key of the input exists on `head` already."""
    schema = graph.repo.schemas.of(head)
    filled = {
        name
        for name in schema.table_names
        if graph.repo.tables.open(head.tables[name]).count_rows() > 0
    }
    if not filled:
        return
    keys: dict[str, list[pa.Array]] = {}
    if fmt == "parquet":
        assert table is not None
        if table in filled:
            keys[table] = list(_parquet_keys(schema, table, paths))
    else:
        for name, key in _jsonl_keys(schema, paths, filled):
            keys.setdefault(name, []).append(key)
    for name, parts in keys.items():
        found = _found(graph, head, name, parts)
        if found:
            shown = ", ".join(map(repr, found[:SHOWN]))
            more = f" (and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""
            raise DuplicateKeyError(
                f"{name}: {len(found)} key(s) of the input exist on {into!r} already: "
                f"{shown}{more}; nothing was ingested (ingest with mode merge, "
                f"`--mode merge`, to update them)"
            )


def _parquet_keys(schema: Schema, table: str, paths: Sequence[Path]) -> Iterator[pa.Array]:
    t = schema.table(table)
    column = t.key if isinstance(t, NodeType) else "id"
    for path in paths:
        pf = open_parquet(path)
        if column not in pf.schema_arrow.names:
            continue  # edges without ids: fresh ids, no collisions
        for batch in pf.iter_batches(batch_size=_BATCH, columns=[column]):
            values = batch.column(0)
            yield pc.cast(values, pa.string()).drop_null()


def _jsonl_keys(
    schema: Schema, paths: Sequence[Path], filled: set[str]
) -> Iterator[tuple[str, pa.Array]]:
    for path in paths:
        batch: dict[str, list[str]] = {}
        with path.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                name, row = parse_record(parse_json_line(raw, str(path), n), str(path), n)
                if name not in filled:
                    continue
                t = schema.table(name)
                key = row.get(t.key if isinstance(t, NodeType) else "id") if t else None
                if key is not None:
                    try:
                        batch.setdefault(name, []).append(key_string(key))
                    except TypeError:
                        continue  # not a key: the worker reports it with its line
        for name, values in batch.items():
            yield name, pa.array(values, pa.string())


def _found(graph: Graph, head: Commit, name: str, parts: list[pa.Array]) -> list[str]:
    if not parts:
        return []
    ds = graph.repo.tables.open(head.tables[name])
    keys = pc.unique(pa.chunked_array(parts, pa.string()).combine_chunks())
    found: list[str] = []
    for start in range(0, len(keys), _BATCH):
        chunk = keys.slice(start, _BATCH)
        found += rows_where_in(ds, "id", chunk, ["id"], distinct=True).column("id").to_pylist()
    return sorted(found)
