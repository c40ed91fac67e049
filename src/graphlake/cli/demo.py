"""`graphlake demo DIR`: build a small social graph, branch it, change both branches,
compare, diff and merge them, then hit a merge conflict and resolve it.

Everything the demo needs comes from `demo_data` (no files are read), so it runs the same
from a checkout and from an installed wheel.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.columns import Columns
from rich.markup import escape

from graphlake.catalog.commits import Commit
from graphlake.cli import demo_data
from graphlake.cli.diff import print_diff
from graphlake.cli.merge import print_conflicts, print_merge
from graphlake.cli.output import CommandError, arrow_table, console, plain_table, short
from graphlake.cli.progress import load_bar
from graphlake.cli.read import log as log_command
from graphlake.cli.write import load_summary, print_load_summary
from graphlake.errors import MergeConflictError, NotAGraphError
from graphlake.graph import Graph

if TYPE_CHECKING:
    import pyarrow as pa

MAIN, DEV, EXP = "main", "dev", demo_data.CONFLICT_BRANCH
BRANCHES = (MAIN, DEV)

MAX_ROWS = 1_000
WHO_WORKS_WHERE = """\
SELECT c.name AS company, count(*) AS staff,
       string_agg(p.name, ', ' ORDER BY p.name) AS people
FROM WorksAt w
JOIN Company c ON c.id = w.dst
JOIN Person p ON p.id = w.src
GROUP BY c.name ORDER BY c.name"""
COUNTS = """\
SELECT (SELECT count(*) FROM Person) AS people, (SELECT count(*) FROM Company) AS companies,
       (SELECT count(*) FROM Knows) AS knows, (SELECT count(*) FROM WorksAt) AS works_at"""
# Filters on names only: DuckDB cannot push a filter on a Vector column down into the
# Lance scan (`WHERE embedding IS NOT NULL` fails), while computing on it works.
NEAREST_TO_ZOE = """\
SELECT p.name,
       round(array_cosine_similarity(p.embedding, z.embedding), 3) AS similarity
FROM Person p, (SELECT embedding FROM Person WHERE name = 'Zoe') z
WHERE p.name <> 'Zoe'
ORDER BY similarity DESC NULLS LAST LIMIT 3"""
CHANGED_PEOPLE = "name IN ('Alice', 'Zoe')"
MERGED_PEOPLE = "name IN ('Alice', 'Carol', 'Zoe')"
SHOWN_COLUMNS = ["name", "age", "role", "email"]
ROUTES_LEGEND = (
    "Each table takes the cheapest route: no_change (dev left it alone), pointer_adoption "
    "(only dev changed it: main points at dev's table, no rows copied), insertion_replay "
    "(dev only inserted: its rows are appended), three_way (key by key against the base)."
)


def demo(
    path: Annotated[
        Path, typer.Argument(metavar="DIR", help="Folder for the demo graph.", file_okay=False)
    ],
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Delete DIR first if it holds a graphlake graph.")
    ] = False,
) -> None:
    """Build a demo graph in DIR; branch, change, compare, diff and merge it; resolve a conflict."""
    _prepare(path, fresh)
    g = _create(path)
    loaded = _load(g)
    _branch_and_change(g)
    _compare(g, loaded)
    _query(g)
    _change_main_and_diff(g, path)
    _merge_dev(g, path)
    _conflict(g, path)
    _history(g, path)


def _prepare(path: Path, fresh: bool) -> None:
    """Make sure DIR can take a new graph; only ever deletes a graphlake graph."""
    if path.is_symlink():
        raise CommandError(f"{path} is a symbolic link; give the folder itself")
    if not path.exists() or not any(path.iterdir()):
        return
    if not _is_graph(path):
        raise CommandError(
            f"{path} is not empty and holds no graphlake graph; "
            "refusing to use or delete it (pick another folder)"
        )
    if not fresh:
        raise CommandError(f"{path} already holds a graph; pass --fresh to replace it")
    shutil.rmtree(path)
    console.print(f"Removed the previous graph at {escape(str(path))}")


def _is_graph(path: Path) -> bool:
    try:
        Graph.open(path)
    except NotAGraphError:
        return False
    return True


def _step(title: str) -> None:
    console.print()
    console.rule(f"[bold]{title}", align="left")


def _create(path: Path) -> Graph:
    _step("1. Create a graph from a schema")
    g = Graph.init(path, demo_data.SCHEMA)
    console.print(
        f"Created {escape(str(path))} with node types "
        f"{', '.join(g.schema.nodes)} and edge types {', '.join(g.schema.edges)}"
    )
    return g


def _load(g: Graph) -> Commit:
    _step(f"2. Load people, companies and edges into {MAIN}")
    records = demo_data.records()
    before = g.head(MAIN)
    with load_bar(len(records)) as advance:
        commit = g.load(records, branch=MAIN, message="load the social graph", progress=advance)
    print_load_summary(load_summary(g, MAIN, before, commit, len(records)))
    return commit


def _branch_and_change(g: Graph) -> None:
    _step(f"3. Branch {DEV} from {MAIN} and change it")
    g.create_branch(DEV, from_=MAIN)
    console.print(
        f"Created branch [cyan]{DEV}[/] at {short(g.head(DEV).id)} "
        "(no data copied: tables fork on first write)"
    )
    with g.write(DEV, message=demo_data.DEV_MESSAGE) as w:
        w.insert("Person", [demo_data.DEV_NEW_PERSON])
        w.update("Person", [demo_data.DEV_UPDATE])
        for table, rows in demo_data.DEV_NEW_EDGES.items():
            w.insert(table, rows)
    new, upd = demo_data.DEV_NEW_PERSON["name"], demo_data.DEV_UPDATE
    changed = ", ".join(f"{k}={v}" for k, v in upd.items() if k != "name")
    console.print(
        f"Committed {short(g.head(DEV).id)} on [cyan]{DEV}[/]: {escape(demo_data.DEV_MESSAGE)}"
    )
    console.print(f"  inserted Person {new}; updated {upd['name']} ({changed})")
    for table, rows in demo_data.DEV_NEW_EDGES.items():
        console.print(f"  added {table} " + ", ".join(f"{r['src']} -> {r['dst']}" for r in rows))


def _compare(g: Graph, loaded: Commit) -> None:
    _step(f"4. {MAIN} is unchanged; {DEV} has the change")
    tables = []
    for b in BRANCHES:
        rows = g.nodes("Person", branch=b, where=CHANGED_PEOPLE, columns=SHOWN_COLUMNS)
        tables.append(arrow_table(rows.sort_by("name"), title=f"Person @ {b}"))

    console.print(Columns(tables, padding=(0, 4)))
    main_head = g.head(MAIN).id
    state = "unchanged" if main_head == loaded.id else "MOVED (unexpected)"
    console.print(f"{MAIN} head: {short(main_head)} ({state}); {DEV} head: {short(g.head(DEV).id)}")


def _query(g: Graph) -> None:
    _step("5. SQL on each branch (DuckDB over a pinned snapshot)")
    _print_sql(WHO_WORKS_WHERE)
    for b in BRANCHES:
        console.print(arrow_table(_sql(g, WHO_WORKS_WHERE, b), title=f"who works where @ {b}"))
    counts = {b: _sql(g, COUNTS, b) for b in BRANCHES}
    names = counts[MAIN].column_names
    rows = [[b, *(counts[b].column(n)[0].as_py() for n in names)] for b in BRANCHES]
    console.print(plain_table(["branch", *names], rows, title="rows per branch"))
    _print_sql(NEAREST_TO_ZOE)
    console.print(arrow_table(_sql(g, NEAREST_TO_ZOE, DEV), title=f"nearest to Zoe @ {DEV}"))


def _sql(g: Graph, query: str, branch: str) -> pa.Table:
    return g.sql(query, branch, max_rows=MAX_ROWS)


def _print_sql(query: str) -> None:
    from rich.syntax import Syntax  # pygments: imported for the demo only

    console.print(
        Syntax(query, "sql", theme="ansi_dark", background_color="default", word_wrap=True)
    )


def _change_main_and_diff(g: Graph, path: Path) -> None:
    _step(f"6. Meanwhile {MAIN} changes too; diff {MAIN} {DEV}")
    with g.write(MAIN, message=demo_data.MAIN_MESSAGE) as w:
        w.insert("Company", [demo_data.MAIN_NEW_COMPANY])
        w.update("Person", [demo_data.MAIN_UPDATE])
        for table, rows in demo_data.MAIN_NEW_EDGES.items():
            w.insert(table, rows)
    console.print(
        f"Committed {short(g.head(MAIN).id)} on [cyan]{MAIN}[/]: {escape(demo_data.MAIN_MESSAGE)}"
    )
    _print_command("diff", path, MAIN, DEV)
    print_diff(g.diff(MAIN, DEV), MAIN, DEV)
    console.print(
        f"A diff compares two states: {MAIN}'s new rows show as deleted on {DEV}. "
        "A merge compares each side with their common base instead.",
        style="dim",
    )


def _merge_dev(g: Graph, path: Path) -> None:
    _step(f"7. Merge {DEV} into {MAIN}")
    _print_command("merge", path, DEV, "--into", MAIN)
    print_merge(g.merge(DEV, into=MAIN))
    console.print(ROUTES_LEGEND, style="dim")
    rows = g.nodes("Person", branch=MAIN, where=MERGED_PEOPLE, columns=SHOWN_COLUMNS)
    console.print(arrow_table(rows.sort_by("name"), title=f"both sides' changes @ {MAIN}"))


def _conflict(g: Graph, path: Path) -> None:
    who, ages = demo_data.CONFLICT_PERSON, demo_data.CONFLICT_AGES
    _step(f"8. A conflict: {EXP} and {MAIN} both set {who}'s age")
    g.create_branch(EXP, from_=MAIN)
    for branch in (EXP, MAIN):
        with g.write(branch, message=f"{who} is {ages[branch]}") as w:
            w.update("Person", [{"name": who, "age": ages[branch]}])
        console.print(
            f"Committed {short(g.head(branch).id)} on [cyan]{branch}[/]: {who} is {ages[branch]}"
        )
    _print_command("merge", path, EXP, "--into", MAIN)
    try:
        g.merge(EXP, into=MAIN)
    except MergeConflictError as exc:
        print_conflicts(exc.conflicts, EXP, MAIN)
    else:
        console.print("The merge did not conflict (unexpected)", style="bold red")
    _print_command("merge", path, EXP, "--into", MAIN, "--strategy", "theirs")
    print_merge(g.merge(EXP, into=MAIN, strategy="theirs"))
    age = (g.get("Person", who, branch=MAIN) or {}).get("age")
    console.print(f"{who}'s age on {MAIN} is now {age} ({EXP}'s value)")


def _print_command(command: str, path: Path, *args: str) -> None:
    """The CLI command that does what the next step does, e.g. `$ graphlake merge DIR ...`."""
    console.print()
    console.print(escape(" ".join(["$ graphlake", command, str(path), *args])), style="dim")


def _history(g: Graph, path: Path) -> None:
    _step(f"9. History of {MAIN}")
    log_command(str(path), branch=MAIN, limit=None, json=False)
    root = escape(str(path))
    console.print()
    console.print("Try next:")
    for cmd in (
        f"graphlake branch list {root}",
        f"graphlake diff {root} {DEV} {MAIN}",
        f"graphlake merge {root} {MAIN} --into {DEV} --dry-run --explain",
        f'graphlake show {root} Person --branch {DEV} --where "age > 40"',
        f'graphlake sql {root} "SELECT role, count(*) FROM Person GROUP BY role"',
    ):
        console.print(f"  {cmd}")
