"""`graphlake fsck --deep`: every commit reachable from a live branch, a tag or a reflog
entry of the last `reflog_keep` (what gc keeps) diffs against each of its parents.

A diff reads both commits' table states and finds their changes (lineage, else the
walk), so this proves what `log --stat`, `diff` and a merge across that edge need: the
states open, and their changes can be computed. Any failure is a `Problem` of check
"diff" whose `where` names the commit and the parent; nothing is changed.

Costs one diff per commit edge (O(changed rows) by lineage, O(rows) where only the walk
can answer): maintenance, not a hot path. Below a reflog entry a missing commit is
no finding (a gc with a shorter `reflog_keep` removes those), as in the shallow check.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from graphlake.catalog.reflog import REFLOG_KEEP
from graphlake.errors import GraphLakeError, clean_message
from graphlake.merge.diff import diff
from graphlake.recovery.fsck import (
    FsckReport,
    Problem,
    history_starts,
    reflog_starts,
    stored,
)

if TYPE_CHECKING:
    from graphlake.repo import Repo


def check_diffs(repo: Repo, report: FsckReport, reflog_keep: dt.timedelta = REFLOG_KEEP) -> None:
    """Add a problem for every reachable commit that does not diff against a parent."""
    seen: set[str] = set()
    _check(repo, sorted(history_starts(repo)), False, seen, report)
    _check(repo, sorted(reflog_starts(repo, reflog_keep)), True, seen, report)


def _check(
    repo: Repo, frontier: list[str], missing_ok: bool, seen: set[str], report: FsckReport
) -> None:
    while frontier:
        cid = frontier.pop()
        if cid in seen:
            continue
        if missing_ok and not stored(repo, cid):
            continue
        seen.add(cid)
        try:
            commit = repo.commits.get(cid)
        except GraphLakeError:
            continue  # the shallow check reports unreadable commits
        for parent in commit.parents:
            if missing_ok and not stored(repo, parent):
                continue
            try:
                diff(repo, parent, cid, limit=0)
            except GraphLakeError as exc:
                message = str(exc)
            except Exception as exc:  # any failure here is the finding
                message = f"{type(exc).__name__}: {clean_message(exc)}"
            else:
                continue
            report.problems.append(
                Problem(
                    "diff",
                    f"commit {cid[:12]} (parent {parent[:12]})",
                    f"does not diff against its parent: {message}",
                )
            )
        frontier.extend(p for p in commit.parents if p not in seen)
