"""`graphlake fsck`: check a graph's invariants; report problems, change nothing.

Checked:

* refs: every branch's newest entry is readable and a live branch points to a commit
  that exists;
* tags: every tag is readable and names a commit that exists;
* history: every commit reachable from a live branch or a tag is readable, its parents
  and schema exist, and every table state it pins opens (that Lance branch and version
  exist); so is every commit reachable from one a reflog entry of the last
  `reflog_keep` names (what `gc` keeps; default 30 days), except that a commit missing
  there is no problem: a `gc` with a shorter `reflog_keep` removes such commits;
* heads: in every table of every live branch, keys are unique, required properties are
  set, and the whole head is valid as if inserted into an empty graph (edge endpoints,
  `@unique`, `@card`, enum/range/check) — the same checks writes and merges run;
* no writer can build on an unreferenced version: where a Lance branch a live branch
  owns has moved past the version its head pins, the next version is claimed (so the
  next writer forks instead of appending);
* recovery records: unreadable ones, and ones whose owner is gone (run `recover`).

Reads every row of every branch head: O(data), meant for maintenance, not for hot paths.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.catalog.commits import Commit, TableState, format_time
from graphlake.catalog.names import decode_name
from graphlake.catalog.reflog import REFLOG_KEEP, kept_commits
from graphlake.catalog.refs import REFS_DIR
from graphlake.constraints.check import all_violations
from graphlake.errors import CheckPatternError, GraphLakeError
from graphlake.recovery.records import RecordStore
from graphlake.schema.arrow import arrow_schema
from graphlake.schema.parser import parse_schema
from graphlake.storage import layout
from graphlake.storage.plan import TablePlan

if TYPE_CHECKING:
    from graphlake.repo import Repo
    from graphlake.schema.model import Schema

# Reporting every violation of a badly broken table helps nobody; this many per check.
MAX_PER_CHECK = 20


@dataclass(frozen=True)
class Problem:
    check: str  # refs | history | table | data | ownership | recovery
    where: str
    message: str


@dataclass
class FsckReport:
    problems: list[Problem] = field(default_factory=list)
    branches: int = 0
    commits: int = 0
    table_states: int = 0
    rows: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": [asdict(p) for p in self.problems],
            "checked": {
                "branches": self.branches,
                "commits": self.commits,
                "table_states": self.table_states,
                "rows": self.rows,
            },
        }


def fsck(repo: Repo, reflog_keep: dt.timedelta = REFLOG_KEEP) -> FsckReport:
    report = FsckReport()
    heads = _check_refs(repo, report)
    tagged = _check_tags(repo, report)
    strict = [c.id for _, c in heads.values()] + tagged
    _check_history(repo, strict, reflog_starts(repo, reflog_keep), report)
    with tempfile.TemporaryDirectory(prefix="graphlake-fsck-") as scratch:
        empty = _EmptyTables(scratch)
        for branch, (incarnation, head) in heads.items():
            _check_head(repo, branch, head, empty, report)
            _check_ownership(repo, branch, incarnation, head, report)
    _check_records(repo, report)
    return report


# --- refs and history ----------------------------------------------------------------


def _check_refs(repo: Repo, report: FsckReport) -> dict[str, tuple[str, Commit]]:
    heads: dict[str, tuple[str, Commit]] = {}
    for key in repo.store.list_dirs(REFS_DIR):
        try:
            branch = decode_name(key.rsplit("/", 1)[-1])
            entry = repo.refs.head(branch)
        except GraphLakeError as exc:
            report.problems.append(Problem("refs", key, str(exc)))
            continue
        if entry is None or entry.commit is None:
            continue
        report.branches += 1
        try:
            heads[branch] = (entry.incarnation, repo.commits.get(entry.commit))
        except GraphLakeError as exc:
            report.problems.append(
                Problem("refs", branch, f"head commit {entry.commit} unreadable: {exc}")
            )
    return heads


def history_starts(repo: Repo) -> list[str]:
    """Where the history checks start: every live branch head and every tag's commit
    (unreadable refs and tags are the shallow check's findings, left out here)."""
    out = [ref.commit for ref in repo.refs.list().values() if ref.commit]
    for name in repo.tags.names():
        try:
            tag = repo.tags.get(name)
        except GraphLakeError:
            continue
        if tag is not None:
            out.append(tag.commit)
    return list(dict.fromkeys(out))


def reflog_starts(repo: Repo, reflog_keep: dt.timedelta = REFLOG_KEEP) -> list[str]:
    """The commits reflog entries of the last `reflog_keep` name (what gc keeps)."""
    return kept_commits(repo.refs, format_time(dt.datetime.now(dt.UTC) - reflog_keep))


def stored(repo: Repo, commit_id: str) -> bool:
    """Whether the commit object is in the store now (not just in this process's cache:
    a gc may have removed it since it was read)."""
    return repo.store.exists(repo.commits.key(commit_id))


def _check_tags(repo: Repo, report: FsckReport) -> list[str]:
    """Every tag's commit id; a problem for an unreadable tag or a missing commit."""
    out = []
    for name in repo.tags.names():
        try:
            tag = repo.tags.get(name)
        except GraphLakeError as exc:
            report.problems.append(Problem("refs", f"tag {name}", str(exc)))
            continue
        if tag is None:
            continue  # deleted meanwhile
        if not stored(repo, tag.commit):
            report.problems.append(
                Problem("refs", f"tag {name}", f"names commit {tag.commit} which does not exist")
            )
            continue
        out.append(tag.commit)
    return out


def _check_history(repo: Repo, strict: list[str], tolerant: list[str], report: FsckReport) -> None:
    """Walk from `strict` (every commit must be there) and then from `tolerant` (reflog
    starts: a missing commit is skipped, gc may have removed it)."""
    seen: set[str] = set()
    states: set[TableState] = set()
    schemas: set[str] = set()
    for starts, missing_ok in ((strict, False), (tolerant, True)):
        _walk(repo, starts, missing_ok, seen, states, schemas, report)
    report.commits = len(seen)
    for sid in sorted(schemas):
        try:
            parse_schema(layout.get_schema(repo.store, sid), stored=True)
        except GraphLakeError as exc:
            report.problems.append(Problem("history", f"schema {sid}", str(exc)))
    for state in sorted(states, key=lambda s: (s.table_id, s.lance_branch, s.version)):
        report.table_states += 1
        try:
            repo.tables.open(state)
        except (OSError, ValueError, GraphLakeError) as exc:
            where = f"{state.table_id}@{state.lance_branch}:{state.version}"
            report.problems.append(Problem("table", where, f"table state unreadable: {exc}"))


def _walk(
    repo: Repo,
    starts: list[str],
    missing_ok: bool,
    seen: set[str],
    states: set[TableState],
    schemas: set[str],
    report: FsckReport,
) -> None:
    frontier = list(starts)
    while frontier:
        next_frontier: list[str] = []
        for cid in frontier:
            if cid in seen:
                continue
            if missing_ok and not stored(repo, cid):
                continue
            seen.add(cid)
            try:
                commit = repo.commits.get(cid)
            except GraphLakeError as exc:
                report.problems.append(Problem("history", cid, f"commit unreadable: {exc}"))
                continue
            states.update(commit.tables.values())
            schemas.add(commit.schema_id)
            next_frontier.extend(p for p in commit.parents if p not in seen)
        frontier = next_frontier


# --- heads ---------------------------------------------------------------------------


class _EmptyTables:
    """An empty Lance dataset per table type: the "empty graph" heads are checked against."""

    def __init__(self, scratch: str) -> None:
        self._scratch = scratch
        self._made: dict[tuple[str, str], lance.LanceDataset] = {}

    def of(self, schema: Schema) -> Callable[[str], lance.LanceDataset]:
        """Empty tables of `schema`: heads on different schemas each get their own."""

        def dataset(name: str) -> lance.LanceDataset:
            layout = arrow_schema(schema.require(name))
            key = (name, str(layout))
            if key not in self._made:
                path = f"{self._scratch}/{name}-{len(self._made)}.lance"
                self._made[key] = lance.write_dataset(layout.empty_table(), path)
            return self._made[key]

        return dataset


def _check_head(
    repo: Repo, branch: str, head: Commit, empty: _EmptyTables, report: FsckReport
) -> None:
    schema: Schema = repo.schemas.of(head)
    plans: dict[str, TablePlan] = {}
    for name in schema.table_names:
        if name not in head.tables:
            report.problems.append(Problem("data", f"{branch}:{name}", "table missing"))
            continue
        try:
            rows = repo.tables.open(head.tables[name]).to_table()
        except (OSError, ValueError) as exc:
            report.problems.append(Problem("data", f"{branch}:{name}", f"unreadable: {exc}"))
            continue
        report.rows += rows.num_rows
        problems = _row_problems(name, rows)
        report.problems += [Problem("data", f"{branch}:{name}", m) for m in problems]
        t = schema.require(name)
        rows = rows.select(arrow_schema(t).names).cast(arrow_schema(t))
        none = rows.schema.empty_table()
        plans[name] = TablePlan(t, rows.schema, rows, none, none, none)
    try:
        violations = all_violations(schema, plans, empty.of(schema))
    except CheckPatternError as exc:  # a stored @check this version cannot run
        report.problems.append(Problem("data", branch, str(exc)))
        return
    for v in violations[: MAX_PER_CHECK * max(1, len(plans))]:
        # A value violation's message names the property, not the row: add its key.
        message = f"{v.entity_id!r}: {v.message}" if v.kind == "value" else v.message
        report.problems.append(Problem("data", f"{branch}:{v.table}", message))


def _row_problems(name: str, rows: pa.Table) -> list[str]:
    out: list[str] = []
    ids = rows.column("id")
    if pc.count_distinct(ids, mode="all").as_py() != rows.num_rows:
        counts = pc.value_counts(ids)
        dups = [c["values"] for c in counts.to_pylist() if c["counts"] > 1][:MAX_PER_CHECK]
        out.append(f"duplicate keys: {', '.join(map(repr, dups))}")
    for f in rows.schema:
        if not f.nullable and rows.column(f.name).null_count:
            out.append(
                f"required property {f.name} is missing in {rows.column(f.name).null_count} rows"
            )
    return out


def _check_ownership(
    repo: Repo, branch: str, incarnation: str, head: Commit, report: FsckReport
) -> None:
    for name, state in head.tables.items():
        if state.owner != incarnation:
            continue  # the branch forks before its first write there
        try:
            newest = repo.tables.branch_head_version(state)
        except (OSError, ValueError) as exc:
            report.problems.append(Problem("ownership", f"{branch}:{name}", str(exc)))
            continue
        claim = f"_graphlake/claims/{state.table_id}/{state.lance_branch}/{state.version + 1:020d}"
        if newest > state.version and not repo.store.exists(claim):
            report.problems.append(
                Problem(
                    "ownership",
                    f"{branch}:{name}",
                    f"Lance branch {state.lance_branch} is at version {newest}, past the "
                    f"published {state.version}, and version {state.version + 1} is not "
                    f"claimed: the next write could build on unpublished data",
                )
            )


def _check_records(repo: Repo, report: FsckReport) -> None:
    records, corrupt = RecordStore(repo.store).scan()
    for key in corrupt:
        report.problems.append(Problem("recovery", key, "recovery record unreadable"))
    for record in records:
        if not record.owner_alive():
            report.problems.append(
                Problem(
                    "recovery",
                    record.key,
                    f"unfinished {record.op} on {record.branch!r} from a process that is gone; "
                    f"run `graphlake recover`",
                )
            )
