"""The `graphlake` command line: wires the command modules into one typer app.

Exit codes: 0 success; 1 the operation failed (a `GraphLakeError`: bad data, unknown
branch, bad schema, ...), reported as one red `error: ...` line on stderr; 2 usage errors
(unknown option, missing argument), reported by typer/click. `merge`, `merge-many` and
`ingest` differ, so scripts can tell a conflict from a failure: 1 conflicts, 2 any other
error (see merge.py and ingest.py).
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from graphlake import __version__
from graphlake.catalog.authors import acting_as
from graphlake.cli import (
    branch,
    data_check,
    demo,
    edit,
    mr,
    read,
    recovery,
    reflog,
    schema,
    tag,
    write,
)
from graphlake.cli.algo import algo
from graphlake.cli.apply import cherry_pick, revert
from graphlake.cli.backfill import backfill
from graphlake.cli.diff import diff
from graphlake.cli.export import export
from graphlake.cli.gc import gc
from graphlake.cli.helptext import plain_metavars
from graphlake.cli.ingest import ingest
from graphlake.cli.ingest_status import ingest_status
from graphlake.cli.merge import merge, merge_many
from graphlake.cli.optimize import optimize
from graphlake.cli.output import console, reported_errors
from graphlake.cli.query import query
from graphlake.cli.search import search
from graphlake.cli.serve import serve
from graphlake.cli.timeline import blame, changes, history

if TYPE_CHECKING:
    # The base's parameter type: typer's vendored click Context (typer.Context derives it).
    from typer._click import Context as ClickContext


class _Group(TyperGroup):
    """The root command group; every subcommand runs inside its error handling."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_metavars(self)  # `ROOT`, `TEXT`, no `<bool>`: see helptext.py

    def invoke(self, ctx: ClickContext) -> Any:
        with reported_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_Group,
    name="graphlake",
    help="A versioned, branchable property-graph store on Lance.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _version(value: bool) -> None:
    if value:
        console.print(f"graphlake {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
    author: Annotated[
        str | None,
        typer.Option(
            "--author",
            help="Who the commits this command makes are by ('Name <email>'; "
            "default $GRAPHLAKE_AUTHOR, then `author` in ~/.config/graphlake/config.toml, "
            "then the OS user).",
        ),
    ] = None,
) -> None:
    """A versioned, branchable property-graph store on Lance."""
    if author is not None:
        with reported_errors():
            # Entered for the rest of the command: every commit it makes records `author`.
            ctx.with_resource(acting_as(author))


app.command("init")(write.init)
app.command("load")(write.load)
app.command("insert")(edit.insert)
app.command("upsert")(edit.upsert)
app.command("update")(edit.update)
app.command("delete")(edit.delete)
app.command("backfill")(backfill)
app.command("export")(export)
app.add_typer(branch.app, name="branch")
app.add_typer(tag.app, name="tag")
app.add_typer(schema.app, name="schema")
app.add_typer(data_check.app, name="data-check")
app.add_typer(mr.app, name="mr")
app.command("log")(read.log)
app.command("show")(read.show)
app.command("sql")(read.sql)
app.command("search")(search)
app.command("query")(query)
app.command("algo")(algo)
app.command("diff")(diff)
app.command("merge")(merge)
app.command("merge-many")(merge_many)
app.command("revert")(revert)
app.command("cherry-pick")(cherry_pick)
app.command("reset")(reflog.reset)
app.command("reflog")(reflog.reflog)
app.command("ingest")(ingest)
app.command("ingest-status")(ingest_status)
app.command("optimize")(optimize)
app.command("gc")(gc)
app.command("recover")(recovery.recover)
app.command("fsck")(recovery.fsck)
app.command("demo")(demo.demo)
app.command("serve")(serve)
app.command("history")(history)
app.command("blame")(blame)
app.command("changes")(changes)


def main() -> None:
    # An application hides Python's developer warnings unless asked for them with -W or
    # PYTHONWARNINGS (the pattern the `warnings` docs give): users see graphlake's own
    # messages, not a dependency's advice to its programmers.
    if not sys.warnoptions:
        warnings.simplefilter("ignore")
    app(prog_name="graphlake")


if __name__ == "__main__":
    main()
