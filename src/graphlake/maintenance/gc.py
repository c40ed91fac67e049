"""`graphlake gc`: remove what no live branch, no commit reachable from one and no
publication in flight needs.

Kept: the head of every live branch, every commit reachable from one (time travel by
commit id keeps working), every (table, Lance branch, version) those commits pin, and
every file those versions' manifests reference, in whichever Lance branch's directory
it lives (a fork reads its parent's files, a zero-copy adoption its source's). Also
the version each kept Lance branch on a pinned state's path to Lance main forked from
(the branch's own copy; Lance keeps the parent's): the merge engine's lineage enters a
branch there, so without it every later merge and diff across the fork falls back to
the O(rows) walk (one manifest per such branch).

Removed, when older than the cutoff: Lance versions no kept commit pins (intermediate
versions of one write, lost-race and crashed writers' versions, versions of deleted
branches) and the files only they referenced; files no manifest references; whole Lance
branches nothing kept uses, with their version claims; unreachable commit objects
(virtual merge bases, crashed publications).

Also kept: the commit of every live read lease (a pinned reader: see
`graphlake.catalog.leases`) and what it reaches, like a branch head; everything a commit
younger than the cutoff reaches, reachable or not (no kept commit loses its parents);
and what a tag, reset or branch create that lands, or a read lease taken, while gc runs
names, even a commit gc found unreachable: before removing anything gc publishes a
notice of the commits it will remove, then re-reads the ref writers' pins, the read
leases and the branches and tags, and keeps what they reach; a ref writer or reader
that reads the notice first refuses instead (`graphlake.catalog.reclaim`). The notice is
withdrawn once its commits are gone.

Also removed, when older than the cutoff: persisted adjacencies (derived state, see
`graphlake.adjacency.persist`) whose table states are no live branch head's, and
abandoned temporary folders of them (counted apart: `adjacencies`, `adjacency_bytes`).

Also removed (not a cutoff matter, and not counted): merge intents whose lease ran out,
which a killed merge leaves behind (see `graphlake.catalog.intents`), and expired read
leases.

The cutoff is `now - grace`, or the start of the oldest publication still in flight if
that is earlier: nothing modified after it is touched.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from graphlake import faults
from graphlake.adjacency import persist
from graphlake.catalog.commits import format_time, is_commit_id
from graphlake.catalog.intents import MergeIntents
from graphlake.catalog.leases import ReadLeases
from graphlake.catalog.reclaim import RefTargets, Sweeps
from graphlake.catalog.reflog import REFLOG_KEEP
from graphlake.catalog.store import ObjectInfo
from graphlake.maintenance.lance_gc import TableSweep
from graphlake.maintenance.report import GcReport, TableGc
from graphlake.maintenance.roots import Roots, extend, find_roots, ref_targets
from graphlake.recovery.records import RecordStore
from graphlake.recovery.recover import recover

if TYPE_CHECKING:
    from graphlake.repo import Repo

__all__ = ["GcReport", "Progress", "TableGc", "gc"]

COMMITS_DIR = "_graphlake/commits"
CLAIMS_DIR = "_graphlake/claims"

# progress(done, total, table): called once before the first table (done=0, table="")
# and after each table.
Progress = Callable[[int, int, str], None]


def gc(
    repo: Repo,
    *,
    grace: dt.timedelta,
    dry_run: bool,
    progress: Progress | None = None,
    reflog_keep: dt.timedelta = REFLOG_KEEP,
) -> GcReport:
    if grace < dt.timedelta(0):
        raise ValueError(f"grace must not be negative: {grace}")
    if reflog_keep < dt.timedelta(0):
        raise ValueError(f"reflog_keep must not be negative: {reflog_keep}")
    if not dry_run:
        # Settle crashed publications first, so what they left is plainly unreferenced.
        # (A dry run changes nothing: their records then just bound the cutoff.)
        recover(repo)

    now = dt.datetime.now(dt.UTC)
    records = RecordStore(repo.store).list()
    cutoff = min([now - grace, *(r.started_at for r in records)])
    leased = sorted(ReadLeases(repo.store).live_commits())
    roots = find_roots(
        repo,
        extra=[*(r.expected_commit for r in records), *leased],
        reflog_since=format_time(now - reflog_keep),
    )
    report = GcReport(dry_run=dry_run, cutoff=cutoff)
    faults.hit("gc.after_roots")

    # Commit objects no root reaches: the old ones go; the young ones stay, and so does
    # everything they reach (gc never leaves a kept commit without its parents).
    unreached = [
        (commit_id, info)
        for info in repo.store.list_info(COMMITS_DIR)
        if is_commit_id(commit_id := info.key.rsplit("/", 1)[-1].removesuffix(".json"))
        and commit_id not in roots.commits
    ]
    young = [commit_id for commit_id, info in unreached if info.modified >= cutoff]
    extend(repo, roots, young, strict=False)
    if dry_run:
        _sweep(repo, roots, unreached, cutoff, report, dry_run, progress)
        return report
    # The handshake with tags, resets and branch creates that name an old commit, and
    # with readers taking a lease (catalog/reclaim.py, catalog/leases.py): announce what
    # goes, then keep whatever a ref writer has pinned, a reader has leased or a branch
    # or tag names by now. Withdrawn only once all of it is gone.
    notice = Sweeps(repo.store).announce(c for c, _ in unreached if c not in roots.commits)
    faults.hit("gc.after_notice")
    extend(repo, roots, RefTargets(repo.store).live(), strict=False)
    extend(repo, roots, ReadLeases(repo.store).live_commits(), strict=False)
    extend(repo, roots, ref_targets(repo))
    _sweep(repo, roots, unreached, cutoff, report, dry_run, progress)
    notice.withdraw()
    MergeIntents(repo.store).sweep()
    ReadLeases(repo.store).sweep()
    RefTargets(repo.store).sweep()
    return report


def _sweep(
    repo: Repo,
    roots: Roots,
    unreached: list[tuple[str, ObjectInfo]],
    cutoff: dt.datetime,
    report: GcReport,
    dry_run: bool,
    progress: Progress | None,
) -> None:
    """Remove (or, `dry_run`, count) what `roots` does not keep and is older than `cutoff`."""
    table_ids = sorted(roots.pinned, key=lambda t: (roots.names.get(t, t), t))
    if progress is not None:
        progress(0, len(table_ids), "")
    for done, table_id in enumerate(table_ids, 1):
        name = roots.names.get(table_id, table_id)
        sweep = TableSweep(repo, table_id, name, roots.pinned[table_id], cutoff, report.warnings)
        table = sweep.run(dry_run)
        report.tables.append(table)
        for lance_branch in table.lance_branches:
            report.claims += _drop_claims(repo, table_id, lance_branch, dry_run)
        faults.hit("gc.after_table_sweep")
        if progress is not None:
            progress(done, len(table_ids), name)

    for commit_id, info in unreached:
        if commit_id in roots.commits or info.modified >= cutoff:
            continue
        report.commit_objects += 1
        report.commit_bytes += info.size
        if not dry_run:
            faults.hit("gc.before_commit_removal")
            repo.store.delete(info.key)
    _sweep_adjacencies(repo, report, cutoff, dry_run)


def _sweep_adjacencies(repo: Repo, report: GcReport, cutoff: dt.datetime, dry_run: bool) -> None:
    base = persist.folder(repo.store.uri_for("") if repo.store.is_local else None)
    if base is None or not base.is_dir():
        return
    heads = [ref.commit for ref in repo.refs.list().values() if ref.commit]
    live = [
        {(s.table_id, s.lance_branch, s.version) for s in commit.tables.values()}
        for commit in repo.commits.get_many(list(dict.fromkeys(heads)))
    ]
    swept = persist.sweep(base, live, cutoff, dry_run=dry_run)
    report.adjacencies, report.adjacency_bytes = swept.entries, swept.bytes


def _drop_claims(repo: Repo, table_id: str, lance_branch: str, dry_run: bool) -> int:
    """Version claims of a Lance branch removed entirely (its name is never reused).
    A live branch's claims are what stop two writers committing the same version."""
    keys = repo.store.list(f"{CLAIMS_DIR}/{table_id}/{lance_branch}")
    if not dry_run:
        for key in keys:
            repo.store.delete(key)
    return len(keys)
