"""The load progress bar, fed by the `progress=` callback of `Graph.load`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from graphlake.cli.output import err_console

Advance = Callable[[int], None]
_PARQUET_SUFFIXES = (".parquet", ".pq")


@contextmanager
def load_bar(total: int | None, enabled: bool = True) -> Iterator[Advance | None]:
    """Yield a callback that advances a bar on stderr, or None when there is no bar.

    The bar only shows on a terminal: in logs and pipes it would be noise (and it would
    sit between the output and an error line). Once every row is read the library still
    validates and writes, so the label says "committing" until the commit is published.
    """
    if not enabled or not err_console.is_terminal:
        yield None
        return
    # rich.progress costs ~0.1 s to import: only when a bar is drawn.
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rows"),
        TimeElapsedColumn(),
        console=err_console,
    ) as bar:
        task = bar.add_task("reading", total=total)

        def advance(rows: int) -> None:
            bar.advance(task, rows)
            done = bar.tasks[0].completed
            if total is not None and done >= total:
                bar.update(task, description="committing")

        yield advance
        done = bar.tasks[0].completed
        bar.update(task, description="loaded", total=done, completed=done)


def count_records(path: Path) -> int | None:
    """Non-blank lines of a JSONL file (the bar's total); None when unknown up front."""
    if path.suffix.lower() in _PARQUET_SUFFIXES or not path.is_file():
        return None
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())
