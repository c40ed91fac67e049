"""The formats `graphlake export` writes: shared by the command (`cli.export`) and its
writers (`cli.export_writers`), so neither imports the other at load time."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"
