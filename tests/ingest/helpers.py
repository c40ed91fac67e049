"""Input files and checks shared by the ingest tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import graphlake as gl

SCHEMA = """
node Doc { key: String @key  n: I64  text: String? }
node Tag { name: String @key }
edge Tagged: Doc -> Tag
"""


def doc_table(prefix: str, n: int, start: int = 0) -> pa.Table:
    keys = [f"{prefix}{i:06d}" for i in range(start, start + n)]
    return pa.table(
        {
            "key": keys,
            "n": pa.array(range(start, start + n), pa.int64()),
            "text": [f"text {k}" for k in keys],
        }
    )


def write_parquet_files(
    folder: Path, sizes: Sequence[int], row_group_size: int = 1_000
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, n in enumerate(sizes):
        path = folder / f"part-{i}.parquet"
        pq.write_table(doc_table(f"p{i}-", n), path, row_group_size=row_group_size)
        paths.append(path)
    return paths


def doc_records(n: int, prefix: str = "j") -> list[dict]:
    return [{"type": "Doc", "data": {"key": f"{prefix}{i:06d}", "n": i}} for i in range(n)]


def write_jsonl(path: Path, records: Sequence[dict | str]) -> Path:
    """Records as JSON lines (a str is written as it is: a blank or a broken line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def keys(g: gl.Graph, table: str = "Doc", branch: str = "main") -> list[str]:
    col = "id"
    return sorted(g.nodes(table, branch=branch, columns=[col]).column(col).to_pylist())


def ingest_branches(g: gl.Graph) -> list[str]:
    return [b for b in g.branches() if b.startswith("ingest/")]


def run_objects(g: gl.Graph) -> list[str]:
    return g.repo.store.list("_graphlake/ingest")
