"""`graphlake merge`: three-way merge of one branch into another, and how it went.

This command has its own exit codes, so scripts can tell a conflict from a failure:
0 merged, fast-forwarded or already up to date (also a clean dry run); 1 conflicts (also
a dry run that finds some); 2 any other failure (a `GraphLakeError` such as an unknown
branch, reported as one `error: ...` line on stderr) and usage errors.

The renderers (`print_merge`, `print_conflicts`) are also what the demo prints.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column, Table

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import (
    CommandError,
    cell,
    console,
    fail,
    plain_table,
    plural,
    print_json,
    short,
)
from graphlake.errors import DataCheckFailedError, GraphLakeError, MergeConflictError
from graphlake.graph import Graph
from graphlake.merge.conflicts import DATA_KINDS, SCHEMA_CONFLICT, Conflict
from graphlake.merge.result import (
    ALREADY_UP_TO_DATE,
    CONFLICT,
    FAST_FORWARD,
    MERGED,
    MergeResult,
)

EXIT_CONFLICTS = 1
EXIT_ERROR = 2
PHASES = ("resolve_base", "discover", "classify", "validate", "publish")
MAX_CONFLICT_ROWS = 20


class Strategy(StrEnum):
    ours = "ours"
    theirs = "theirs"


class Lineage(StrEnum):
    on = "on"
    off = "off"
    verify = "verify"


Into = Annotated[str, typer.Option("--into", "-i", help="Branch to merge into.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Classify and validate, publish nothing.")]
Message = Annotated[
    str | None, typer.Option("--message", "-m", help="Message of the merge commit.")
]
Explain = Annotated[
    bool, typer.Option("--explain", help="Also show discovery probes and phase timings.")
]
ResolveFile = Annotated[
    Path | None,
    typer.Option(
        "--resolve",
        help="A JSON list of per-conflict resolutions: {table, key, property, take "
        "(ours, theirs, base, a source's name, value), value}; a schema conflict: "
        "{table, property (null: the type), take (ours, theirs)}, no key.",
    ),
]
Checks = Annotated[
    bool,
    typer.Option(
        "--checks",
        help="Run the merged result's data checks on the merged state first; a "
        "failing one refuses the merge (exit 1).",
    ),
]


def load_resolutions(path: Path) -> list[dict[str, Any]]:
    """The resolutions a `--resolve FILE.json` holds: a list, or {"resolutions": [...]}."""
    try:
        data = jsonlib.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read resolutions from {path}: {exc}") from None
    if isinstance(data, dict) and set(data) == {"resolutions"}:
        data = data["resolutions"]
    if not isinstance(data, list):
        raise CommandError(f"{path}: resolutions are a JSON list of objects")
    return data


def merge(
    root: Root,
    source: Annotated[
        str, typer.Argument(help="Branch or any revision to merge (commit id, dev~1, ...).")
    ],
    into: Into = DEFAULT_BRANCH,
    dry_run: DryRun = False,
    strategy: Annotated[
        Strategy | None,
        typer.Option(
            help="Resolve data conflicts: ours keeps --into's values, theirs "
            "takes SOURCE's. Constraint violations are never resolved."
        ),
    ] = None,
    lineage: Annotated[
        Lineage | None,
        typer.Option(
            help="How changed rows are found: on (lineage, falling back to a "
            "walk), off (walk), verify (both, must agree). "
            "Default: $GRAPHLAKE_MERGE_LINEAGE, else on."
        ),
    ] = None,
    message: Message = None,
    resolve: ResolveFile = None,
    checks: Checks = False,
    json: Json = False,
    explain: Explain = False,
) -> None:
    """Three-way merge of SOURCE (a branch or any revision) into branch --into, as one commit.

    Exit codes: 0 merged / fast-forward / already up to date, 1 conflicts or a failing
    data check, 2 error.
    """
    _run_and_report(
        lambda: Graph.open(root).merge(
            source,
            into,
            strategy=strategy and strategy.value,
            dry_run=dry_run,
            message=message,
            lineage=lineage and lineage.value,
            resolutions=load_resolutions(resolve) if resolve is not None else None,
            checks=checks,
        ),
        source,
        into,
        json,
        explain,
    )


def merge_many(
    root: Root,
    sources: Annotated[list[str], typer.Argument(help="Branches to merge.")],
    into: Into = DEFAULT_BRANCH,
    strict_disjoint: Annotated[
        bool,
        typer.Option("--strict-disjoint", help="Refuse any key that two sources both changed."),
    ] = False,
    dry_run: DryRun = False,
    strategy: Annotated[
        Strategy | None,
        typer.Option(
            help="Resolve data conflicts with --into: ours keeps --into's values, "
            "theirs takes the sources'. Conflicts between two sources and "
            "constraint violations are never resolved."
        ),
    ] = None,
    lineage: Annotated[
        Lineage | None,
        typer.Option(help="How changed rows are found (see `graphlake merge --help`)."),
    ] = None,
    message: Message = None,
    resolve: ResolveFile = None,
    checks: Checks = False,
    json: Json = False,
    explain: Explain = False,
) -> None:
    """Merge SOURCES into --into as ONE commit with parents \\[into, source1, ...].

    Exit codes: 0 merged / fast-forward / already up to date, 1 conflicts, 2 error.
    """
    _run_and_report(
        lambda: Graph.open(root).merge_many(
            sources,
            into,
            strict_disjoint=strict_disjoint,
            strategy=strategy and strategy.value,
            dry_run=dry_run,
            message=message,
            lineage=lineage and lineage.value,
            resolutions=load_resolutions(resolve) if resolve is not None else None,
            checks=checks,
        ),
        ",".join(sources),
        into,
        json,
        explain,
    )


def _run_and_report(
    run: Callable[[], MergeResult], source: str, into: str, json: bool, explain: bool
) -> None:
    """Run a merge and print how it went; exit 1 on conflicts (also of a dry run), 2 on
    any other failure."""
    with merge_errors(json, source, into):
        result = run()
    if json:
        print_json(result.to_dict())
    else:
        print_merge(result, explain=explain)
    if result.outcome == CONFLICT or result.checks_passed is False:
        raise typer.Exit(EXIT_CONFLICTS)


@contextmanager
def merge_errors(json: bool, source: str, into: str) -> Iterator[None]:
    """Conflicts: print them (JSON, or a table) and exit 1; any other failure exits 2 (the
    app's policy elsewhere is 1). Shared by `merge`, `merge-many` and `ingest`."""
    try:
        yield
    except MergeConflictError as exc:
        if json:
            print_json(
                {
                    "outcome": CONFLICT,
                    "source": source,
                    "target": into,
                    "conflicts": [c.to_dict() for c in exc.conflicts],
                }
            )
        else:
            print_conflicts(exc.conflicts, source, into)
        raise fail(exc, EXIT_CONFLICTS) from None
    except DataCheckFailedError as exc:
        if json:
            print_json(
                {
                    "outcome": "data_checks_failed",
                    "source": source,
                    "target": into,
                    "data_checks": [r.to_dict() for r in exc.results],
                }
            )
        else:
            print_checks(exc.results)
        raise fail(exc, EXIT_CONFLICTS) from None
    except (GraphLakeError, CommandError) as exc:
        raise fail(exc, EXIT_ERROR) from None


# --- rendering --------------------------------------------------------------------------


def print_merge(result: MergeResult, explain: bool = False) -> None:
    """The outcome line, the route of each table, resolved and unresolved conflicts."""
    console.print(outcome_line(result))
    if result.stats:
        console.print(routes_table(result))
    if result.resolved:
        console.print(
            conflict_table(
                result.resolved, result.source, result.target, title="resolved conflicts"
            )
        )
    if result.conflicts:
        console.print(conflict_table(result.conflicts, result.source, result.target))
        console.print(hint(result.conflicts, result.source, result.target), style="dim")
    if result.data_checks is not None:
        print_checks(result.data_checks)
    if explain:
        if result.stats:
            console.print(probes_table(result))
        console.print(timings_table(result.timings))


def print_checks(results: Sequence[Any]) -> None:
    """Data checks on the merged result: pass or FAIL, with the first offending rows."""
    for r in results:
        mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
        console.print(f"data check {mark} {escape(r.name)}")
        if r.error:
            console.print(f"  error: {escape(r.error)}")
        for row in r.rows[:5]:
            console.print(f"  {escape(str(row))}")
        if len(r.rows) > 5 or r.more:
            console.print("  ...")


def print_conflicts(conflicts: Sequence[Conflict], source: str, target: str) -> None:
    """What a failed merge reports: nothing was published, the conflicts, how to resolve."""
    console.print(
        f"Merge of [cyan]{escape(source)}[/] into [cyan]{escape(target)}[/] stopped "
        f"on {plural(len(conflicts), 'conflict')}; nothing was published"
    )
    console.print(conflict_table(conflicts, source, target))
    console.print(hint(conflicts, source, target), style="dim")


def outcome_line(r: MergeResult) -> str:
    src, dst = f"[cyan]{escape(r.source)}[/]", f"[cyan]{escape(r.target)}[/]"
    commit, base = short(r.commit or ""), short(r.base or "")
    if r.outcome == ALREADY_UP_TO_DATE:
        return f"{dst} is already up to date with {src} (head {commit}); nothing to do"
    if r.outcome == FAST_FORWARD:
        if r.dry_run:
            return f"Dry run: {dst} would fast-forward to {src}'s head {commit}; nothing changed"
        return f"Fast-forwarded {dst} to {commit} ({src}'s head; no merge commit needed)"
    if r.outcome == MERGED:
        if r.dry_run:
            return f"Dry run: {src} merges cleanly into {dst} (base {base}); nothing changed"
        return f"Merged {src} into {dst} as commit [bold]{commit}[/] (base {base})"
    if r.outcome == CONFLICT:
        return (
            f"Dry run: merging {src} into {dst} stops on "
            f"{plural(len(r.conflicts), 'conflict')}; nothing changed"
        )
    return f"{escape(r.outcome)}: {src} into {dst} (commit {commit})"


def routes_table(r: MergeResult) -> Table:
    """table, route, discovery, changes on each side, effects; routes never wrap."""
    out = Table(
        "table",
        Column("route", no_wrap=True),
        "discovery",
        *(Column(f"changes on {escape(b)}", justify="right") for b in (r.source, r.target)),
        Column("effects", justify="right"),
        title="routes",
        title_justify="left",
    )
    for name, s in r.stats.items():
        out.add_row(
            *(
                cell(v)
                for v in (name, s.route, s.discovery, s.source_changes, s.target_changes, s.effects)
            )
        )
    return out


def probes_table(r: MergeResult) -> Table:
    rows = [
        [name, s.discovery, s.fallback or "-", s.candidates, s.rows_scanned]
        for name, s in r.stats.items()
    ]
    return plain_table(
        ["table", "discovery", "fallback", "candidates", "rows scanned"],
        rows,
        title="discovery probes",
    )


def timings_table(timings: dict[str, float]) -> Table:
    """Every phase in order (`-` when it did not run), then the total, in milliseconds."""
    out = Table("phase", Column("ms", justify="right"), title="timings", title_justify="left")
    phases = [*PHASES, *(p for p in timings if p not in PHASES)]
    for phase in phases:
        out.add_row(phase, _ms(timings[phase]) if phase in timings else "-")
    out.add_row("total", _ms(sum(timings.values())), style="bold")
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def conflict_table(
    conflicts: Sequence[Conflict], source: str, target: str, title: str = "conflicts"
) -> Table:
    """kind, table, entity, properties (with each side's values), then the message, or how
    a strategy resolved the conflict; at most MAX_CONFLICT_ROWS rows."""
    resolved = any(c.resolution for c in conflicts)
    last = "resolution" if resolved else "message"
    # The entity (a key users copy) never wraps or is cut; the other columns fold.
    out = Table(
        Column("kind", no_wrap=True),
        Column("table", overflow="fold"),
        Column("entity", no_wrap=True),
        Column("properties", overflow="fold"),
        Column(last, overflow="fold"),
        title=title,
        title_justify="left",
    )
    for c in conflicts[:MAX_CONFLICT_ROWS]:
        detail = _resolution(c, source, target) if resolved else _message(c)
        out.add_row(
            c.kind, c.table, cell(c.entity_id), cell(_properties(c, source, target)), cell(detail)
        )
    if len(conflicts) > MAX_CONFLICT_ROWS:
        out.caption = f"… {len(conflicts) - MAX_CONFLICT_ROWS} more; --json lists all"
    return out


def _properties(c: Conflict, source: str, target: str) -> str:
    """`age: 29 → exp 41 / main 42`: base, then each side's value, per property."""
    if not (c.source or c.target):
        return ", ".join(c.properties) or "-"
    named = list(c.rows.items()) if c.rows is not None else [(source, c.source), (target, c.target)]
    if c.between_sources and c.target is not None:
        named.append((target, c.target))  # the target's row, neither source's
    parts = []
    for p in c.properties:
        sides = [f"{name} {_value(row, p)}" for name, row in named if row is not None]
        before = f"{_value(c.base, p)} → " if c.base is not None else ""
        parts.append(f"{p}: {before}{' / '.join(sides)}")
    return "; ".join(parts) or "-"


def _message(c: Conflict) -> str:
    """The message without its `Person 'Bob': ` prefix, which the row already shows."""
    return c.message.removeprefix(f"{c.table} {c.entity_id!r}: ")


def _value(row: dict[str, Any], prop: str) -> str:
    return cell(row.get(prop)).plain


def _resolution(c: Conflict, source: str, target: str) -> str:
    if c.resolution is None:
        return "-"
    source, target = c.sides or (source, target)
    side = source if c.resolution == Strategy.theirs else target
    return f"{c.resolution}: {side}'s values"


def hint(conflicts: Sequence[Conflict], source: str, target: str) -> str:
    """How to resolve these conflicts, naming only options `merge` / `merge-many` have.

    --strategy settles data conflicts with the target only; conflicts between two sources
    of a merge-many (`c.sides` names them) and constraint violations need a fix on a branch.
    """
    resolvable = (*DATA_KINDS, SCHEMA_CONFLICT)  # --strategy settles schema conflicts too
    with_target = [c for c in conflicts if c.kind in resolvable and not c.between_sources]
    between = [c for c in conflicts if c.between_sources]
    parts = []
    if with_target:
        parts.append(
            f"Resolve conflicts with {escape(target)} with --strategy theirs "
            f"(the source's values) or --strategy ours ({escape(target)}'s)."
        )
    if between:
        parts.append(
            "Conflicts between two sources are never resolved by --strategy: "
            "change one of the sources, or merge them one at a time."
        )
    if any(c.kind not in resolvable for c in conflicts):
        parts.append("Fix constraint violations on a branch, then merge again.")
    return " ".join(parts)
