"""`graphlake data-check set|list|run`: a branch's data checks (named read queries that
pass when they return no rows; see docs/guides/merge.md "Data checks").

`run` exits 0 when every check passes, 1 when one fails (its rows are printed), 2 on
any other error, like `merge`, so a script can tell a failing check from a failure.
"""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated, Any

import typer

from graphlake.cli.options import DEFAULT_BRANCH, Json, Root
from graphlake.cli.output import CommandError, console, fail, plain_table, print_json, printable
from graphlake.errors import GraphLakeError
from graphlake.graph import Graph

app = typer.Typer(
    help="Set, list and run data checks (read queries that pass when they return no rows).",
    no_args_is_help=True,
)

EXIT_FAILED_CHECKS = 1
EXIT_ERROR = 2

Rev = Annotated[str, typer.Argument(help="Branch or any revision (commit id, main~1, ...).")]


@app.command("set")
def set_(
    root: Root,
    name: Annotated[str | None, typer.Argument(help="The check's name.")] = None,
    query: Annotated[
        str | None,
        typer.Argument(help="Its query: Cypher if it parses as Cypher, else SQL."),
    ] = None,
    branch: Annotated[str, typer.Option("--branch", "-b", help="Branch to change.")] = (
        DEFAULT_BRANCH
    ),
    remove: Annotated[bool, typer.Option("--remove", help="Remove check NAME.")] = False,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="A JSON object {name: query} that replaces every check of the branch.",
        ),
    ] = None,
    message: Annotated[str | None, typer.Option("--message", "-m", help="Commit message.")] = None,
    json: Json = False,
) -> None:
    """Set check NAME to QUERY (the others stay), remove it (--remove), or replace them
    all (--file). Published as one commit; a query that is not a read query or does not
    parse is refused and nothing changes."""
    g = Graph.open(root)
    if file is not None:
        if name is not None or remove:
            raise CommandError("--file replaces every check: give no NAME and no --remove")
        try:
            checks: dict[str, Any] = jsonlib.loads(file.read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from None
    elif name is None:
        raise CommandError("give NAME and QUERY, NAME with --remove, or --file FILE.json")
    else:
        checks = dict(g.data_checks(branch))
        if remove:
            if query is not None:
                raise CommandError("--remove takes no QUERY")
            if name not in checks:
                raise CommandError(f"branch {branch!r} has no data check {name!r}")
            del checks[name]
        elif query is None:
            raise CommandError(f"give the query of {name!r} (or --remove)")
        else:
            checks[name] = query
    commit = g.set_data_checks(checks, branch, message=message)
    if json:
        print_json({"branch": branch, "commit": commit.id, "checks": g.data_checks(commit.id)})
        return
    console.print(
        f"[cyan]{printable(branch)}[/] at {commit.id[:12]}: "
        f"{len(g.data_checks(commit.id))} data check(s)"
    )


@app.command("list")
def list_(root: Root, rev: Rev = DEFAULT_BRANCH, json: Json = False) -> None:
    """List the data checks in force at REV."""
    checks = Graph.open(root).data_checks(rev)
    if json:
        print_json(checks)
        return
    console.print(
        plain_table(
            ["check", "language", "query"],
            [[printable(n), c["language"], printable(c["query"])] for n, c in checks.items()],
        )
    )


@app.command("run")
def run(
    root: Root,
    rev: Rev = DEFAULT_BRANCH,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Seconds per check (default 60).")
    ] = None,
    json: Json = False,
) -> None:
    """Run the data checks in force at REV on REV: each passes when its query returns no
    rows; up to 20 offending rows are shown. Exit codes: 0 all pass, 1 one fails, 2 error."""
    try:
        results = Graph.open(root).run_data_checks(rev, timeout_s=timeout)
    except GraphLakeError as exc:
        raise fail(exc, EXIT_ERROR) from None
    if json:
        print_json([r.to_dict() for r in results])
    else:
        for r in results:
            mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
            console.print(f"{mark} {printable(r.name)} ({r.language}, {r.seconds:.2f} s)")
            if r.error:
                console.print(f"  error: {printable(r.error)}")
            elif r.rows:
                names = list(r.rows[0])
                console.print(
                    plain_table(names, [[printable(str(row[k])) for k in names] for row in r.rows])
                )
                if r.more:
                    console.print("  (more rows not shown)")
    if not all(r.passed for r in results):
        raise typer.Exit(EXIT_FAILED_CHECKS)
