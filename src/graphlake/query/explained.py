"""What `explain=True` carries besides its step rows: the logical plan (query.logical),
one operator a line, top-down, each with its executor, in the report's schema metadata
under `LOGICAL_PLAN_KEY`. Light on purpose: the CLI and the server read it without
loading the planner (the server runs queries in worker processes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

LOGICAL_PLAN_KEY = b"logical_plan"


def logical_plan_lines(report: pa.Table) -> list[str] | None:
    """The logical plan an explain report carries, one operator a line (top-down; an
    OPTIONAL MATCH's operators indented with `| `); None when it carries none."""
    text = (report.schema.metadata or {}).get(LOGICAL_PLAN_KEY)
    return None if text is None else text.decode().splitlines()
