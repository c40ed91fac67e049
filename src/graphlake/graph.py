"""`Graph`: the public facade. It opens a `Repo` (the storage context of one root) and
calls down into the layers: `write/`, `merge/`, `read/`, `search/`, `query/`,
`recovery/`, `maintenance/`. Those take the `Repo` (or a snapshot of one commit), never
the `Graph`: nothing below this module imports it."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from graphlake.catalog.authors import Author, acting_as
from graphlake.catalog.commits import Commit, CommitStore
from graphlake.catalog.names import validate_branch_name
from graphlake.catalog.reclaim import RefTargets
from graphlake.catalog.reflog import ReflogEntry
from graphlake.catalog.refs import RefEntry, RefStore
from graphlake.catalog.store import ObjectStore
from graphlake.catalog.tags import Tag, validate_tag_name
from graphlake.errors import (
    BranchExistsError,
    GraphLakeError,
    NotAGraphError,
    RevisionSyntaxError,
    StaleReadError,
    TagExistsError,
)
from graphlake.merge.result import MergeResult
from graphlake.repo import Repo
from graphlake.retry import Backoff
from graphlake.storage import layout

# Lance, pyarrow, DuckDB and the schema parser are imported where a method needs them,
# not here: `graphlake log`, `branch list` and `--help` read only the catalog (see
# README "Start-up time").
if TYPE_CHECKING:
    import pyarrow as pa

    from graphlake.maintenance.gc import GcReport
    from graphlake.merge.diff import TableDiff
    from graphlake.query.data_checks import CheckResult
    from graphlake.read.snapshot import Snapshot
    from graphlake.recovery.fsck import FsckReport
    from graphlake.recovery.recover import RecoveryReport
    from graphlake.review.workflow import Reviews
    from graphlake.schema.model import Schema
    from graphlake.search.query import SearchPlan
    from graphlake.search.upkeep import Threshold
    from graphlake.timeline.feed import ChangePage
    from graphlake.timeline.rows import BlameLine
    from graphlake.timeline.rows import HistoryEntry as RowHistoryEntry
    from graphlake.write.schema_apply import SchemaPlan
    from graphlake.write.transaction import Transaction

DEFAULT_BRANCH = "main"
T = TypeVar("T")


class Graph:
    """A versioned, branchable property graph stored under one root URI."""

    def __init__(
        self,
        uri: str | os.PathLike[str],
        storage_options: dict[str, str] | None,
        *,
        _info: layout.GraphInfo | None = None,
    ):
        # The graph's parts (object store, commits, refs, history, schemas, tables) live on
        # `repo`, once; callers below the facade reach them there (`g.repo.refs`).
        self.repo = Repo(uri, storage_options, info=_info)
        self.uri = self.repo.uri
        self.storage_options = storage_options

    @property
    def schema(self) -> Schema:
        """The schema in force at the default branch's head (see `schema_at`)."""
        return self.schema_at(self.repo.info.default_branch)

    def schema_at(self, revision: str = DEFAULT_BRANCH) -> Schema:
        """The schema in force at a revision (a branch, commit id, `main~2`...)."""
        return self.repo.schema_at(revision)

    def schema_text(self, revision: str = DEFAULT_BRANCH) -> str:
        """The `.pg` text of the schema in force at a revision, as it was applied."""
        return self.repo.schemas.text(self.resolve(revision).schema_id)

    def apply_schema(
        self,
        pg_text: str,
        branch: str = DEFAULT_BRANCH,
        message: str | None = None,
        dry_run: bool = False,
        *,
        allow_drop: bool = False,
        author: str | Author | None = None,
    ) -> SchemaPlan:
        """Change `branch`'s schema to `pg_text`: returns the plan (typed steps, each with
        its cost) and, unless `dry_run`, publishes it as one commit (`plan.commit`).

        Every step is checked against the branch's rows first; a refused or violated step
        raises a `SchemaChangeError` and publishes nothing. Applying a schema equal to the
        current one raises `SchemaUnchangedError` (a dry run returns an empty plan). A
        plan that drops stored values (`plan.dropped_values`: a property's non-null values,
        a type's rows) is applied only with `allow_drop=True`, else `SchemaDropError`
        (a dry run reports them and `plan.suggestions` names likely renames).
        """
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.write.schema_apply import apply_schema

        with acting_as(author):
            return apply_schema(
                self.repo,
                pg_text,
                branch,
                message=message,
                dry_run=dry_run,
                allow_drop=allow_drop,
            )

    # --- data checks ------------------------------------------------------------------

    def set_data_checks(
        self,
        checks: Mapping[str, Any],
        branch: str = DEFAULT_BRANCH,
        *,
        message: str | None = None,
        author: str | Author | None = None,
    ) -> Commit:
        """Replace `branch`'s data checks by `checks`, `{name: query}`: a data check is a
        read query (Cypher or SQL; a string is Cypher if it parses as Cypher, else SQL;
        or `{"language": "cypher" | "sql", "query": text}`) that passes when it returns no
        rows. Published as one commit (returned; the head itself when nothing changed);
        `{}` removes them all. A bad name or a query that is not a read query or does not
        parse raises `DataCheckError` and publishes nothing."""
        # on first use only: loads lance, duckdb (start-up time)
        from graphlake.write.data_checks import set_data_checks

        with acting_as(author):
            return set_data_checks(self.repo, branch, checks, message)

    def data_checks(self, rev: str = DEFAULT_BRANCH) -> dict[str, dict[str, str]]:
        """The data checks in force at a revision: `{name: {"language", "query"}}`."""
        return self.repo.data_checks.of(self.resolve(rev))

    def run_data_checks(
        self, rev: str = DEFAULT_BRANCH, *, timeout_s: float | None = None
    ) -> list[CheckResult]:
        """Run the data checks in force at a revision on that revision: per check (by
        name) whether it passed and up to 20 offending rows (`CheckResult`). A check that
        cannot run there (e.g. its type is gone) fails with its `error`. `timeout_s`
        (default 60 s) bounds each query."""
        # on first use only: loads lance, duckdb (start-up time)
        from graphlake.query.data_checks import local_runner, run_checks

        # on first use only: loads lance, duckdb (start-up time)
        from graphlake.read.sql import DEFAULT_TIMEOUT_S, SqlLimits

        snap = self.snapshot(rev)
        runner = local_runner(SqlLimits(timeout_s=timeout_s or DEFAULT_TIMEOUT_S))
        return run_checks(snap, self.repo.data_checks.of(snap.commit), runner)

    # --- lifecycle --------------------------------------------------------------------

    @classmethod
    def init(
        cls,
        uri: str | os.PathLike[str],
        schema: str | os.PathLike[str],
        storage_options: dict[str, str] | None = None,
        *,
        author: str | Author | None = None,
    ) -> Graph:
        """Create a graph at `uri` with `schema` (.pg text or a path) and branch "main"."""
        # On first use only (start-up time): python-ulid reads package metadata on import;
        # the schema modules load pyarrow, lark and re2; storage.tables loads Lance.
        from ulid import ULID

        from graphlake.schema.arrow import arrow_schema  # start-up: as above
        from graphlake.schema.parser import load_schema  # start-up: as above
        from graphlake.storage.tables import TableStore, index_columns  # start-up: as above

        parsed = load_schema(schema)
        store = ObjectStore(str(uri), storage_options)
        layout.ensure_absent(store)
        sid = layout.put_schema(store, parsed.text)
        tables = TableStore(store.uri_for(""), store, storage_options)
        incarnation = str(ULID())
        states = {}
        for name in parsed.table_names:
            t = parsed.require(name)
            states[name] = tables.create(
                f"{name}-{ULID()}".lower(),
                arrow_schema(t),
                index_columns(t),
                incarnation,
                text_columns=t.search,
            )
        with acting_as(author):
            commit = Commit.create(
                parents=(),
                message="init",
                schema_id=sid,
                tables=states,
            )
            CommitStore(store).put(commit)
            RefStore(store).create(DEFAULT_BRANCH, commit.id, incarnation=incarnation)
        info = layout.GraphInfo(
            format=layout.FORMAT,
            default_branch=DEFAULT_BRANCH,
            schema_id=sid,
            created=dt.datetime.now(dt.UTC).isoformat(),
        )
        layout.write_info(store, info)
        return cls(uri, storage_options, _info=info)

    @classmethod
    def open(
        cls,
        uri: str | os.PathLike[str],
        storage_options: dict[str, str] | None = None,
        *,
        recover: bool = True,
    ) -> Graph:
        """Open an existing graph. Costs O(1) in history length.

        Publications a crashed process left unfinished are settled first (see
        `Graph.recover`; `recover=False` skips that, e.g. to inspect them).
        """
        if _is_local(str(uri)) and not Path(uri).is_dir():
            raise NotAGraphError(f"{uri} is not a graphlake graph (no such folder)")
        graph = cls(uri, storage_options)
        if recover:
            graph.recover()  # settle publications a crashed process left (one listing)
        return graph

    def __repr__(self) -> str:
        return f"Graph({self.uri!r})"

    # --- branches and history ---------------------------------------------------------

    def branches(self) -> list[str]:
        return sorted(self.repo.refs.list())

    def create_branch(self, name: str, from_: str = DEFAULT_BRANCH) -> str:
        """Create branch `name` at revision `from_` (a branch, commit id, `main~1`...)."""
        validate_branch_name(name)
        commit = self.resolve(from_)
        if self.repo.tags.get(name) is not None:
            raise BranchExistsError(
                f"{name!r} is a tag: branches and tags share one namespace (pick another name)"
            )
        with RefTargets(self.repo.store).pinned(commit.id):  # a running gc keeps it
            self.repo.refs.create(name, commit.id)
        return name

    def reset_branch(
        self, branch: str, rev: str, *, author: str | Author | None = None
    ) -> RefEntry:
        """Move `branch` to the commit revision `rev` names (any commit: back, forward or
        sideways), as one compare-and-swap recorded in the reflog (`action` "reset").
        Nothing is rewritten: the commits it leaves stay reachable from the reflog for
        `gc`'s `reflog_keep` (30 days by default), so a reset can be undone by another.
        Protection is a server rule; the library acts with the rights of whoever owns
        the files. `BranchNotFoundError` for an unknown branch."""
        ref = self._ref(branch)
        commit = self.resolve(rev)
        with acting_as(author), RefTargets(self.repo.store).pinned(commit.id):
            return self.repo.refs.cas(branch, ref, commit.id, action="reset")

    def reflog(self, branch: str = DEFAULT_BRANCH, limit: int | None = None) -> list[ReflogEntry]:
        """Every move of `branch` (write, merge, revert, reset, create, delete...),
        newest first: time, author, old -> new commit, action. Works for a deleted
        branch too; `BranchNotFoundError` if it never existed."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.catalog.reflog import reflog

        validate_branch_name(branch)
        return reflog(self.repo.refs, branch, limit)

    # --- tags -------------------------------------------------------------------------

    def tag(
        self,
        name: str,
        rev: str = DEFAULT_BRANCH,
        message: str | None = None,
        *,
        author: str | Author | None = None,
    ) -> Tag:
        """Name the commit revision `rev` names as tag `name`, forever: an existing tag
        (`TagExistsError`) or a branch of that name (`TagExistsError`) is refused, and
        `gc` keeps everything a tag reaches. A tag is a revision wherever one is taken."""
        validate_tag_name(name)
        commit = self.resolve(rev)
        if self.repo.tags.get(name) is None:
            ref = self.repo.refs.head(name)
            if ref is not None and ref.commit is not None:
                raise TagExistsError(
                    f"{name!r} is a branch: branches and tags share one "
                    "namespace (pick another name)"
                )
        with acting_as(author) as who, RefTargets(self.repo.store).pinned(commit.id):
            return self.repo.tags.create(name, commit.id, message, who)

    def tags(self) -> dict[str, Tag]:
        """Every tag, name -> `Tag` (name, commit, time, author, message), by name."""
        return self.repo.tags.list()

    def delete_tag(self, name: str) -> Tag:
        """Remove tag `name` (`TagNotFoundError` if there is none); returns it. The
        commits stay while a branch or another tag reaches them."""
        validate_tag_name(name)
        return self.repo.tags.delete(name)

    def delete_branch(self, name: str) -> None:
        """Remove the branch name. Its data stays while any commit references it."""
        validate_branch_name(name)
        if name == self.repo.info.default_branch:
            raise GraphLakeError(f"cannot delete the default branch {name!r}")
        ref = self._ref(name)
        self.repo.refs.delete(name, ref)

    def head(self, branch: str = DEFAULT_BRANCH) -> Commit:
        return self.repo.head(branch)

    def resolve(self, revision: str) -> Commit:
        """The commit a revision names: a branch's head, a commit id (or unique prefix of
        at least 7 hex characters), either followed by `~N` / `^N` steps (see README
        "Revisions"). A branch name wins over a commit id prefix."""
        return self.repo.resolve(revision)

    def log(self, branch: str = DEFAULT_BRANCH, limit: int | None = None) -> list[Commit]:
        """Commits reachable from revision `branch`, newest first; for a range `A...B`,
        those of B that the merge base of A and B does not reach."""
        span = self.repo.revisions.range(branch)
        if span is None:
            return self.repo.history.log(self.resolve(branch).id, limit=limit)
        return self.repo.history.log(span.end.id, limit=limit, exclude=[b.id for b in span.bases])

    def _ref(self, branch: str) -> RefEntry:
        """The ref of a branch that writing needs (a commit revision is refused)."""
        return self.repo.branch_ref(branch)

    # --- writing ----------------------------------------------------------------------

    def write(
        self,
        branch: str = DEFAULT_BRANCH,
        message: str = "write",
        meta: dict[str, Any] | None = None,
        *,
        expect_head: str | None = None,
        author: str | Author | None = None,
    ) -> Transaction:
        """A transaction: `with g.write("dev") as w: w.insert(...)` publishes one commit.

        `meta` (JSON-able) is recorded in the commit atomically with its data, e.g. the
        input offset an ingest worker has reached. Rows read with `w.get` are checked
        again at publish (`StaleReadError` if another writer changed them); with
        `expect_head` (a commit id) the transaction publishes only on that head.
        `author` (`"Name <email>"`) is recorded in the commit (default: see
        `catalog.authors`).
        """
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.write.transaction import Transaction

        self._ref(branch)
        return Transaction(self.repo, branch, message, meta, expect_head=expect_head, author=author)

    def transact(
        self,
        fn: Callable[[Transaction], T],
        branch: str = DEFAULT_BRANCH,
        message: str = "write",
        *,
        attempts: int = 10,
        author: str | Author | None = None,
    ) -> T:
        """Run `fn(w)` in a transaction and publish it; if a row `fn` read with `w.get`
        changed before the publish (`StaleReadError`), run `fn` again on fresh reads,
        up to `attempts` times. Returns what `fn` returned.

        For read-modify-write: ``g.transact(lambda w: w.update("Counter", [{"name": "c",
        "n": w.get("Counter", "c")["n"] + 1}]))`` never loses an increment.
        """
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        backoff = Backoff(attempts)
        for attempt in range(attempts):
            backoff.start()
            w = self.write(branch, message, author=author)
            try:
                with w:
                    result = fn(w)
            except StaleReadError:
                if attempt == attempts - 1:
                    raise
                backoff.wait(attempt)
                continue
            return result
        raise AssertionError("unreachable")

    def load(
        self,
        source: Any,
        branch: str = DEFAULT_BRANCH,
        mode: str = "append",
        *,
        table: str | None = None,
        message: str | None = None,
        progress: Any = None,
        coerce: bool = False,
        author: str | Author | None = None,
    ) -> Commit:
        """Load JSONL (see DESIGN "Load format"), Parquet or Arrow data in one commit.

        Values must have their properties' types; `coerce=True` casts those that do not
        (Arrow's safe casts, e.g. "3.5" -> 3.5), as on `w.insert`/`upsert`/`update`."""
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.write.load import load

        with acting_as(author):
            return load(
                self.repo,
                source,
                branch=branch,
                mode=mode,
                table=table,
                message=message,
                progress=progress,
                coerce=coerce,
            )

    def optimize(
        self,
        branch: str = DEFAULT_BRANCH,
        *,
        if_needed: bool = False,
        threshold: Threshold | None = None,
        author: str | Author | None = None,
    ) -> Commit:
        """Compact fragments and refresh indexes of every table on `branch` (building or
        retraining the declared ANN and full-text indexes: README "Search"), as one
        commit that changes no content (or none, if there is nothing to do). With
        `if_needed`, only when a search index has passed `threshold` (`search.upkeep`)."""
        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.write.optimize import optimize

        self._ref(branch)  # a commit revision or unknown branch fails before any waiting
        if if_needed:
            # on first use only: loads lance, pyarrow, numpy (start-up time)
            from graphlake.search.upkeep import due

            if not due(self.snapshot(branch), threshold):
                return self.head(branch)
        with acting_as(author):
            return optimize(self.repo, branch)

    # --- maintenance ------------------------------------------------------------------

    def recover(self, *, force: bool = False) -> RecoveryReport:
        """Finish or roll back publications a crashed process left unfinished.

        Runs on every `open`; this runs it on demand. `force=True` also takes over
        records whose owner might still be running (only when you know none is).
        """
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.recovery.recover import recover

        return recover(self.repo, force=force)

    def fsck(self, *, deep: bool = False, reflog_keep: dt.timedelta | None = None) -> FsckReport:
        """Check the graph's invariants; reports problems, changes nothing. History is
        checked from every live branch, every tag and every reflog entry of the last
        `reflog_keep` (default 30 days, as `gc`'s). `deep` also diffs every such commit
        against each of its parents."""
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.catalog.reflog import REFLOG_KEEP

        # on first use only: loads lance, duckdb (start-up time)
        from graphlake.recovery.fsck import fsck

        keep = REFLOG_KEEP if reflog_keep is None else reflog_keep
        report = fsck(self.repo, keep)
        if deep:
            # on first use only: loads lance, pyarrow, lark (start-up time)
            from graphlake.merge.history_check import check_diffs

            check_diffs(self.repo, report, keep)
        return report

    def gc(
        self,
        *,
        grace: dt.timedelta = dt.timedelta(hours=1),
        dry_run: bool = False,
        progress: Any = None,
        reflog_keep: dt.timedelta | None = None,
    ) -> GcReport:
        """Remove table versions, files and commit objects that no live branch, no
        commit reachable from one and no publication in flight needs. Only what is
        older than `grace` is removed (a concurrent writer's fresh work is safe). What
        the reflog of any branch (deleted ones too) reached within `reflog_keep`
        (default 30 days) is kept, so recent resets and deletes can be undone."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.catalog.reflog import REFLOG_KEEP

        # on first use only: loads lance, pyarrow, numpy (start-up time)
        from graphlake.maintenance.gc import gc

        return gc(
            self.repo,
            grace=grace,
            dry_run=dry_run,
            progress=progress,
            reflog_keep=REFLOG_KEEP if reflog_keep is None else reflog_keep,
        )

    # --- merging ----------------------------------------------------------------------

    def merge(
        self,
        source: str,
        into: str = DEFAULT_BRANCH,
        *,
        strategy: str | None = None,
        dry_run: bool = False,
        message: str | None = None,
        lineage: str | None = None,
        memory_budget: int | None = None,
        author: str | Author | None = None,
        resolutions: Sequence[Mapping[str, Any]] | None = None,
        checks: bool = False,
        check_runner: Any = None,
    ) -> MergeResult:
        """Three-way merge of `source` (a branch or any revision, e.g. a commit id) into
        branch `into`, published as one commit (its second parent is `source`'s commit).

        Raises `MergeConflictError` (nothing published) on conflicts that `strategy`
        ("ours" keeps the target's side, "theirs" takes the source's) does not resolve;
        constraint violations of the merged result are never auto-resolved.
        `lineage` ("on" | "off" | "verify", default $GRAPHLAKE_MERGE_LINEAGE or "on")
        chooses how changed rows are found; `memory_budget` (bytes, default 256 MiB)
        bounds the fallback walk. `resolutions` settle single conflicts
        (`[{"table", "key", "property", "take", "value"}]`, see merge/resolutions.py);
        the merge commit records them in `meta.resolutions`.

        Both sides' data checks merge three-way by name (`data_check_conflict` when both
        changed one differently). `checks=True` runs the merged result's data checks on
        the merged state before publishing (`result.data_checks`); if one fails,
        `DataCheckFailedError` (with `.results`) and nothing is published. With
        `dry_run=True` too, they run on the would-be merged state, which is discarded.
        `check_runner(language, snapshot, query)` runs each check's query (default: in
        this process; the server runs them in query workers).
        """
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.merge import engine as merge_engine

        with acting_as(author):
            return merge_engine.merge(
                self.repo,
                source,
                into,
                strategy=strategy,
                dry_run=dry_run,
                message=message,
                lineage=lineage,
                memory_budget=memory_budget,
                resolutions=resolutions,
                checks=checks,
                check_runner=check_runner,
            )

    def revert(
        self,
        rev: str,
        branch: str = DEFAULT_BRANCH,
        *,
        mainline: int | None = None,
        strategy: str | None = None,
        dry_run: bool = False,
        message: str | None = None,
        lineage: str | None = None,
        author: str | Author | None = None,
    ) -> MergeResult:
        """Publish one commit on `branch` that undoes what revision `rev` changed against
        its parent (for a merge commit: parent number `mainline`, default 1), as a
        three-way merge with base `rev`, source `rev`'s parent and target the branch head
        (merge/apply.py): later changes elsewhere stay; a row changed since is a conflict
        (`MergeConflictError`, unless `strategy` resolves it). `ApplyCommitError` for a
        root commit or a bad `mainline`."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.merge import apply

        with acting_as(author):
            return apply.revert(
                self.repo,
                rev,
                branch,
                mainline=mainline,
                strategy=strategy,
                dry_run=dry_run,
                message=message,
                lineage=lineage,
            )

    def cherry_pick(
        self,
        rev: str,
        into: str = DEFAULT_BRANCH,
        *,
        mainline: int | None = None,
        strategy: str | None = None,
        dry_run: bool = False,
        message: str | None = None,
        lineage: str | None = None,
        author: str | Author | None = None,
    ) -> MergeResult:
        """Apply what revision `rev` changed against its parent (`mainline` for a merge)
        onto branch `into` as one commit recording `meta.cherry_picked_from` (three-way:
        base `rev`'s parent, source `rev`). A commit `into` already contains, or whose
        changes it already has, gives the outcome `already_up_to_date`."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.merge import apply

        with acting_as(author):
            return apply.cherry_pick(
                self.repo,
                rev,
                into,
                mainline=mainline,
                strategy=strategy,
                dry_run=dry_run,
                message=message,
                lineage=lineage,
            )

    def merge_many(
        self,
        sources: Sequence[str],
        into: str = DEFAULT_BRANCH,
        *,
        strict_disjoint: bool = False,
        strategy: str | None = None,
        dry_run: bool = False,
        message: str | None = None,
        lineage: str | None = None,
        memory_budget: int | None = None,
        author: str | Author | None = None,
        checks: bool = False,
        check_runner: Any = None,
        resolutions: Sequence[Mapping[str, Any]] | None = None,
    ) -> MergeResult:
        """Merge N branches (or revisions) into `into` as ONE commit with parents
        [into, s1, ..., sN].

        All sources are merged against one common base; a key two sources changed
        differently is a conflict (and `strict_disjoint=True` refuses any key touched by
        two sources). Sources the target already contains are skipped. `checks` and
        `resolutions` as in `merge` (a resolution's `take` may name one source of a
        conflict between sources).
        """
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.merge import engine as merge_engine

        with acting_as(author):
            return merge_engine.merge_many(
                self.repo,
                sources,
                into,
                strict_disjoint=strict_disjoint,
                strategy=strategy,
                dry_run=dry_run,
                message=message,
                lineage=lineage,
                memory_budget=memory_budget,
                checks=checks,
                check_runner=check_runner,
                resolutions=resolutions,
            )

    def diff(self, a: str, b: str | None = None, limit: int | None = None) -> dict[str, TableDiff]:
        """Per table: what revision `b` inserted, updated (old -> new per property) and
        deleted since revision `a`; with `b` omitted, `a` is a range `A...B` (from the merge
        base of A and B to B). Counts cover every change; rows are kept for at most `limit`
        ids per kind of change and table (None: all)."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.merge import diff as merge_diff

        if b is None:
            a, b = self.diff_range(a)
        return merge_diff.diff(self.repo, a, b, limit)

    def diff_range(self, text: str) -> tuple[str, str]:
        """The (merge base id, end id) that range `A...B` compares."""
        span = self.repo.revisions.range(text)
        if span is None:
            raise RevisionSyntaxError(
                f"{text!r} is not a range: compare two revisions, or give one A...B"
            )
        return span.single_base().id, span.end.id

    # --- reading ----------------------------------------------------------------------

    def snapshot(self, branch: str = DEFAULT_BRANCH) -> Snapshot:
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.read.snapshot import Snapshot

        return Snapshot(self.repo, self.resolve(branch), branch)

    def nodes(
        self,
        type: str,
        branch: str = DEFAULT_BRANCH,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        order_by: str | Sequence[str] | None = "id",
    ) -> pa.Table:
        """Rows of node type `type` on `branch`, by `id` unless `order_by` names columns
        (`"-age"`: descending) or is None (storage order: no sort, for bulk reads)."""
        return self.snapshot(branch).read(type, "node", where, columns, limit, order_by)

    def edges(
        self,
        type: str,
        branch: str = DEFAULT_BRANCH,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        order_by: str | Sequence[str] | None = "id",
    ) -> pa.Table:
        """Rows of edge type `type` on `branch`, by `id` unless `order_by` names columns
        (`"-age"`: descending) or is None (storage order: no sort, for bulk reads)."""
        return self.snapshot(branch).read(type, "edge", where, columns, limit, order_by)

    def get(self, type: str, key: Any, branch: str = DEFAULT_BRANCH) -> dict[str, Any] | None:
        return self.snapshot(branch).get(type, key)

    # --- readers of a pinned revision (graphlake.readers; each behind an extra) -------

    def to_torch(
        self,
        type: str,
        rev: str = DEFAULT_BRANCH,
        columns: Sequence[str] | None = None,
        **options: Any,
    ) -> Any:
        """A PyTorch `IterableDataset` of `type` at `rev`, resolved once and leased
        (`graphlake.readers.pytorch.to_torch`: batch_size, shuffle, rank, world_size,
        drop_last, where, ...). Needs `graphlake[torch]`."""
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.readers.pytorch import to_torch

        return to_torch(self.snapshot(rev), type, columns, **options)

    def to_ray(
        self,
        type: str,
        rev: str = DEFAULT_BRANCH,
        columns: Sequence[str] | None = None,
        **options: Any,
    ) -> Any:
        """A Ray Data `Dataset` of `type` at `rev` whose read tasks read fragments of the
        pinned state (`graphlake.readers.raydata.to_ray`). Needs `graphlake[ray]`."""
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.readers.raydata import to_ray

        return to_ray(self.snapshot(rev), type, columns, **options)

    def to_hf(
        self,
        type: str,
        rev: str = DEFAULT_BRANCH,
        columns: Sequence[str] | None = None,
        **options: Any,
    ) -> Any:
        """A Hugging Face `datasets.Dataset` (or, `streaming=True`, `IterableDataset`) of
        `type` at `rev` (`graphlake.readers.hf.to_hf`). Needs `graphlake[hf]`."""
        # on first use only: loads lance, pyarrow, lark (start-up time)
        from graphlake.readers.hf import to_hf

        return to_hf(self.snapshot(rev), type, columns, **options)

    def to_polars(
        self,
        type: str,
        rev: str = DEFAULT_BRANCH,
        columns: Sequence[str] | None = None,
        **options: Any,
    ) -> Any:
        """A Polars `LazyFrame` of `type` at `rev` pushing projections and filters down
        to Lance (`graphlake.readers.polars_frame.to_polars`). Needs `graphlake[polars]`."""
        # on first use only: loads polars (start-up time)
        from graphlake.readers.polars_frame import to_polars

        return to_polars(self.snapshot(rev), type, columns, **options)

    def sql(
        self,
        query: str,
        branch: str = DEFAULT_BRANCH,
        *,
        max_rows: int | None = None,
        timeout_s: float | None = None,
    ) -> pa.Table:
        """Read-only SQL over one pinned snapshot; tables are registered by type name.
        `timeout_s` (default 60 s) bounds the whole query (`QueryTimeoutError`)."""
        # on first use only: loads lance, duckdb, pyarrow (start-up time)
        from graphlake.read.sql import DEFAULT_TIMEOUT_S, SqlLimits, run_sql

        return run_sql(
            self.snapshot(branch),
            query,
            max_rows=max_rows,
            limits=SqlLimits(timeout_s=DEFAULT_TIMEOUT_S),
            timeout_s=timeout_s,
        )

    @overload
    def search(
        self,
        type: str,
        vector: Any = None,
        text: str | None = None,
        k: int = 10,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        branch: str = DEFAULT_BRANCH,
        near: Any = None,
        *,
        on: str | Sequence[str] = (),
        explain: Literal[False] = False,
    ) -> pa.Table: ...

    @overload
    def search(
        self,
        type: str,
        vector: Any = None,
        text: str | None = None,
        k: int = 10,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        branch: str = DEFAULT_BRANCH,
        near: Any = None,
        *,
        on: str | Sequence[str] = (),
        explain: Literal[True],
    ) -> SearchPlan: ...

    @overload
    def search(
        self,
        type: str,
        vector: Any = None,
        text: str | None = None,
        k: int = 10,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        branch: str = DEFAULT_BRANCH,
        near: Any = None,
        *,
        on: str | Sequence[str] = (),
        explain: bool,
    ) -> pa.Table | SearchPlan: ...

    def search(
        self,
        type: str,
        vector: Any = None,
        text: str | None = None,
        k: int = 10,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        branch: str = DEFAULT_BRANCH,
        near: Any = None,
        *,
        on: str | Sequence[str] = (),
        explain: bool = False,
    ) -> pa.Table | SearchPlan:
        """The k best rows of `type` on one pinned commit of revision `branch`: nearest to
        `vector` (or to node `near`'s own vector) with `_distance`, best BM25 matches of
        `text` with `_score`, or both fused by reciprocal rank with `_rrf`; best first,
        ties by id. `where` filters before ranking; `on` names the properties to search.
        `explain=True` returns a `SearchPlan` (rows searched through an index vs exactly)
        instead of rows. See README "Search"."""
        # on first use only: keeps the CLI's start-up light (test_startup_imports)
        from graphlake.search import query

        req = query.SearchRequest(
            type,
            vector,
            text,
            k,
            where,
            columns,
            near,
            (on,) if isinstance(on, str) else tuple(on),
        )
        snap = self.snapshot(branch)
        return query.explain(snap, req) if explain else query.search(snap, req)

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        branch: str = DEFAULT_BRANCH,
        *,
        max_rows: int | None = None,
        timeout_s: float | None = None,
        explain: bool = False,
    ) -> pa.Table:
        """An openCypher read query over one pinned snapshot (any branch or commit).
        `timeout_s` (default 60 s) bounds the whole query, parsing, planning and prefetch
        included (`QueryTimeoutError`)."""
        # on first use only: loads lance, duckdb, pyarrow (start-up time)
        from graphlake.query.executor import run_query

        # on first use only: loads lance, duckdb, pyarrow (start-up time)
        from graphlake.read.sql import DEFAULT_TIMEOUT_S, SqlLimits

        return run_query(
            self.snapshot(branch),
            cypher,
            params,
            max_rows=max_rows,
            timeout_s=timeout_s,
            limits=SqlLimits(timeout_s=DEFAULT_TIMEOUT_S),
            explain=explain,
        )

    # --- graph algorithms (graphlake.algo) --------------------------------------------

    @property
    def algo(self) -> GraphAlgorithms:
        """Graph algorithms on one edge type at any revision: `g.algo.pagerank("Knows",
        branch="main")` -> Arrow table of node `id` and `rank`; see GraphAlgorithms."""
        return GraphAlgorithms(self)

    # --- merge requests ---------------------------------------------------------------

    @property
    def reviews(self) -> Reviews:
        """Merge requests (`open`, `list`, `get`, `preview`, `approve`, `comment`,
        `close`, `merge`): see graphlake/review/workflow.py. One instance per Graph, so
        its preview cache lives as long as the Graph."""
        found = self.__dict__.get("_reviews")
        if found is None:
            # on first use only: loads lance, duckdb, pyarrow (start-up time)
            from graphlake.review.workflow import Reviews

            found = self.__dict__.setdefault("_reviews", Reviews(self.repo))
        return found

    # --- row history, blame and the change feed (graphlake.timeline) ------------------

    def row_history(
        self,
        type: str,
        key: Any,
        branch: str = DEFAULT_BRANCH,
        limit: int | None = None,
    ) -> list[RowHistoryEntry]:
        """The commits that changed row `key` of `type` (insert, update, delete), newest
        first along the first parents of revision `branch`, each with author, time,
        message and old -> new per property; at most `limit`. Follows lineage: only the
        commits whose delta touches the row's table, only the row's key (README "Row
        history"). `RowNotFoundError` when no commit there holds the row."""
        # on first use only: loads pyarrow, lark, re2 (start-up time)
        from graphlake.timeline.rows import row_history

        return row_history(self.repo, type, key, branch, limit)

    def blame(self, type: str, key: Any, branch: str = DEFAULT_BRANCH) -> list[BlameLine]:
        """For each property of row `key` of `type` at revision `branch`, the commit that
        set its current value, following merges into the merged-in branch that made
        the change (as git blame does), not the merge commit."""
        # on first use only: loads pyarrow, lark, re2 (start-up time)
        from graphlake.timeline.rows import blame

        return blame(self.repo, type, key, branch)

    def changes(
        self, branch: str = DEFAULT_BRANCH, since: str | None = None, limit: int = 1000
    ) -> ChangePage:
        """The next page of `branch`'s change feed after cursor `since` (None: from the
        beginning of its history): entries (commit, author, time, table, key, op,
        old -> new) oldest first along first parents, and `cursor`, which resumes
        exactly after the last entry in any process. `limit` 1..10000. Typed errors:
        `ChangeFeedError` (a foreign cursor, another branch's, a bad limit),
        `CursorExpiredError` (gc removed the cursor's commit), `CursorResetError` (the
        branch was reset past it)."""
        # on first use only: loads pyarrow, lark, re2 (start-up time)
        from graphlake.timeline.feed import changes

        return changes(self.repo, branch, since, limit)


class GraphAlgorithms:
    """`Graph.algo`: each method runs one algorithm (graphlake.algo.algorithms says what it
    computes) on edge type `edge_type` as revision `branch` holds it, and returns an Arrow
    table of node `id` (and `type` when the edge type joins two node types) and the value,
    ordered by id. Parameters out of range raise `AlgorithmError`; a run whose estimated
    memory passes `max_memory_mb` raises `AlgorithmMemoryError` before it starts."""

    def __init__(self, graph: Graph):
        self._graph = graph

    def run(
        self, name: str, edge_type: str, branch: str = DEFAULT_BRANCH, **options: Any
    ) -> pa.Table:
        """Algorithm `name` (or a LadybugDB alias: `page_rank`, `k_core_decomposition`)."""
        # on first use only: loads numpy, lance (start-up time)
        from graphlake.algo.run import run

        return run(self._graph.snapshot(branch), name, edge_type, **options)

    def pagerank(
        self, edge_type: str, branch: str = DEFAULT_BRANCH, *, damping: float = 0.85, **limits: Any
    ) -> pa.Table:
        return self.run("pagerank", edge_type, branch, damping=damping, **limits)

    def weakly_connected_components(
        self, edge_type: str, branch: str = DEFAULT_BRANCH, **limits: Any
    ) -> pa.Table:
        return self.run("wcc", edge_type, branch, **limits)

    def strongly_connected_components(
        self, edge_type: str, branch: str = DEFAULT_BRANCH, **limits: Any
    ) -> pa.Table:
        return self.run("scc", edge_type, branch, **limits)

    def louvain(
        self,
        edge_type: str,
        branch: str = DEFAULT_BRANCH,
        *,
        resolution: float = 1.0,
        seed: int = 0,
        threads: int | None = None,
        **limits: Any,
    ) -> pa.Table:
        """NetworKit's PLM on `threads` threads (default: OMP_NUM_THREADS, else the CPUs):
        repeatable with `threads=1`; with more, two runs may give different partitions."""
        return self.run(
            "louvain",
            edge_type,
            branch,
            resolution=resolution,
            seed=seed,
            threads=threads,
            **limits,
        )

    def leiden(
        self,
        edge_type: str,
        branch: str = DEFAULT_BRANCH,
        *,
        resolution: float = 1.0,
        iterations: int = 10,
        seed: int = 0,
        **limits: Any,
    ) -> pa.Table:
        return self.run(
            "leiden",
            edge_type,
            branch,
            resolution=resolution,
            iterations=iterations,
            seed=seed,
            **limits,
        )

    def kcore(self, edge_type: str, branch: str = DEFAULT_BRANCH, **limits: Any) -> pa.Table:
        return self.run("kcore", edge_type, branch, **limits)

    def shortest_paths(
        self,
        edge_type: str,
        source: str,
        branch: str = DEFAULT_BRANCH,
        *,
        weight: str | None = None,
        **limits: Any,
    ) -> pa.Table:
        """Distances from node `source` (a key of the edge type's source node type) along
        out-edges, summing numeric property `weight` (None: 1 per edge)."""
        return self.run("shortest_paths", edge_type, branch, source=source, weight=weight, **limits)


def _is_local(uri: str) -> bool:
    return "://" not in uri or uri.startswith("file://")
