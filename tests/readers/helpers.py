"""A small graph with a vector, a text and a blob column, written in several fragments."""

from __future__ import annotations

from pathlib import Path

import graphlake as gl

SCHEMA = """
node Sample { k: I64 @key  emb: Vector(4)  text: String  label: I32  raw: Blob? }
"""


def rows(start: int, stop: int) -> list[dict]:
    return [
        {
            "k": i,
            "emb": [i, i + 0.5, -i, 1.0],
            "text": f"t{i}",
            "label": i % 5,
            "raw": bytes([i % 256]) * 8,
        }
        for i in range(start, stop)
    ]


def sample_graph(
    path: Path | str,
    parts: tuple[int, ...] = (100, 70, 130),
    storage_options: dict[str, str] | None = None,
) -> gl.Graph:
    """One write (so one Lance fragment) per part; keys 0..sum(parts)-1."""
    g = gl.Graph.init(path, SCHEMA, storage_options=storage_options)
    start = 0
    for n in parts:
        with g.write(message=f"rows {start}..") as w:
            w.insert("Sample", rows(start, start + n))
        start += n
    return g


def read_in_child(refs: list) -> list:
    """Resolve pickled blob handles in another process (a spawned pool's worker)."""
    return gl.read_blobs(refs)
