"""`graphlake schema show|plan|apply`: the schema in force on a branch, and changing it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from graphlake.cli.options import DEFAULT_BRANCH, Branch, Json, Root, TargetBranch
from graphlake.cli.output import console, plain_table, plural, print_json, printable, short
from graphlake.errors import SchemaError
from graphlake.graph import Graph

if TYPE_CHECKING:
    from graphlake.write.schema_apply import SchemaPlan

app = typer.Typer(
    help="Show and change a branch's schema (schema changes are commits).", no_args_is_help=True
)

SchemaFile = Annotated[Path, typer.Argument(help="The new schema (.pg file).", dir_okay=False)]
Message = Annotated[str | None, typer.Option("--message", "-m", help="Commit message.")]


@app.command("show")
def show(root: Root, branch: Branch = DEFAULT_BRANCH, json: Json = False) -> None:
    """Print the schema (.pg text) in force at BRANCH (any revision)."""
    g = Graph.open(root)
    text = g.schema_text(branch)
    if json:
        print_json({"revision": branch, "commit": g.resolve(branch).id, "schema": text})
        return
    # Plain stdout, unstyled: the output is a valid .pg file (`> schema.pg`).
    typer.echo(printable_lines(text), nl=not text.endswith("\n"))


@app.command("plan")
def plan(
    root: Root, file: SchemaFile, branch: TargetBranch = DEFAULT_BRANCH, json: Json = False
) -> None:
    """The steps (and their cost) that would change BRANCH's schema to FILE; checks the
    branch's rows; publishes nothing."""
    result = Graph.open(root).apply_schema(_read(file), branch, dry_run=True)
    _report(result, json)


@app.command("apply")
def apply(
    root: Root,
    file: SchemaFile,
    branch: TargetBranch = DEFAULT_BRANCH,
    message: Message = None,
    json: Json = False,
    allow_drop: Annotated[
        bool,
        typer.Option(
            "--allow-drop",
            help="Apply a plan that drops stored values (a dropped "
            "property's values, a dropped type's rows); `schema plan` counts them.",
        ),
    ] = False,
) -> None:
    """Change BRANCH's schema to FILE as one commit (refused if its rows break a step,
    if nothing changes, or if it drops values without --allow-drop)."""
    result = Graph.open(root).apply_schema(
        _read(file), branch, message=message, allow_drop=allow_drop
    )
    _report(result, json)


def _read(file: Path) -> str:
    # on first use only: loads pyarrow, lark, re2 (start-up time)
    from graphlake.schema.model import MAX_SCHEMA_BYTES

    try:
        if file.stat().st_size > MAX_SCHEMA_BYTES:
            raise SchemaError(f"schema file {file} is larger than {MAX_SCHEMA_BYTES} bytes")
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"schema file not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read schema file {file}: {exc}") from None


def _report(result: SchemaPlan, json: bool) -> None:
    if json:
        print_json(result.to_json())
        return
    if not result.steps:
        console.print(f"no changes: the schema equals the one on {escape(result.branch)}")
        return
    console.print(
        plain_table(
            ["step", "table", "cost", "what"],
            [[s.kind, s.table, str(s.cost), s.describe()] for s in result.steps],
            title=f"schema plan for {escape(result.branch)} ({short(result.base)})",
        )
    )
    for what, n in result.dropped_values.items():
        unit = "value" if "." in what else "row"
        verb = "drops" if result.commit is None else "dropped"
        console.print(f"[yellow]this plan {verb} {plural(n, unit)} of {escape(what)}[/]")
    for hint in result.suggestions:
        console.print(f"hint: {escape(hint)}")
    if result.commit is None:
        console.print(f"dry run: nothing published; overall cost {result.cost}", style="dim")
    else:
        console.print(
            f"Published {short(result.commit.id)} on [cyan]{escape(result.branch)}[/]"
            f" ({len(result.steps)} step(s), cost {result.cost})"
        )


def printable_lines(text: str) -> str:
    """`text` with terminal controls removed from each line, newlines kept."""
    return "\n".join(printable(line.expandtabs(4)) for line in text.split("\n"))
