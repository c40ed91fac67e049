"""`graphlake gc`: reclaim table versions, files and commit objects nothing needs."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from graphlake.cli.options import Json, Root
from graphlake.cli.output import console, err_console, plural, print_json
from graphlake.graph import Graph
from graphlake.maintenance.report import GcReport

if TYPE_CHECKING:  # maintenance.gc imports Lance
    from graphlake.maintenance.gc import Progress as GcProgress

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"(\d+)([smhdw])")


def parse_duration(text: str) -> dt.timedelta:
    """`0`, `90s`, `30m`, `1h`, `7d`, `2w`, or combined (`1h30m`)."""
    value = text.strip().lower()
    if value == "0":
        return dt.timedelta(0)
    parts = _DURATION.findall(value)
    if not value or "".join(n + u for n, u in parts) != value:
        raise typer.BadParameter(
            f"{text!r} is not a duration; use a number and a unit s, m, h, d or w "
            f"(e.g. 0s, 30m, 1h, 7d)"
        )
    return dt.timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in parts))


def gc(
    root: Root,
    grace: Annotated[
        str,
        typer.Option(
            "--grace",
            help="Only remove what is older than this (e.g. 0s, 30m, 1h, 7d): "
            "a concurrent writer's fresh work is safe.",
        ),
    ] = "1h",
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Report what would be removed; remove nothing.",
        ),
    ] = False,
    reflog_keep: Annotated[
        str,
        typer.Option(
            "--reflog-keep",
            help="Keep what the reflog of any branch reached this recently "
            "(e.g. 0s, 7d; default 30d), so resets and deletes can be "
            "undone.",
        ),
    ] = "30d",
    json: Json = False,
) -> None:
    """Remove table versions, files and commit objects that no live branch, no tag, no
    recent reflog entry, no commit reachable from those and no publication in flight
    needs."""
    grace_td = parse_duration(grace)
    keep_td = parse_duration(reflog_keep)
    g = Graph.open(root)
    with _table_bar(enabled=not json) as progress:
        report = g.gc(grace=grace_td, dry_run=dry_run, progress=progress, reflog_keep=keep_td)
    if json:
        print_json(report.to_dict())
        return
    _summary(report)


def _summary(report: GcReport) -> None:
    verb = "would remove" if report.dry_run else "removed"
    parts = [
        plural(report.versions, "table version"),
        f"{plural(report.files, 'file')} ({_size(report.bytes)})",
        plural(report.lance_branches, "Lance branch").replace("branchs", "branches"),
        plural(report.commit_objects, "commit object"),
        plural(report.claims, "version claim"),
        plural(report.adjacencies, "persisted adjacency").replace("cys", "cies"),
    ]
    console.print(f"gc {verb}: {', '.join(parts)}")
    for t in report.tables:
        if t.versions or t.files or t.lance_branches:
            console.print(
                f"  {t.table}: {plural(t.versions, 'version')}, "
                f"{plural(t.files, 'file')} ({_size(t.bytes)})"
                + (f", {len(t.lance_branches)} Lance branches" if t.lance_branches else "")
            )
    for warning in report.warnings:
        err_console.print(f"[yellow]warning:[/] {warning}")


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@contextmanager
def _table_bar(enabled: bool = True) -> Iterator[GcProgress | None]:
    """A bar over tables on stderr, only on a terminal (in logs it would be noise)."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    # rich.progress costs ~0.1 s to import: only when a bar is drawn.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("gc {task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tables"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)

        def advance(done: int, total: int, table: str) -> None:
            bar.update(task, completed=done, total=total, description=table)

        yield advance
