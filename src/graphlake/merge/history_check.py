"""`graphlake fsck --deep`: every commit reachable from a live branch diffs against each
of its parents.

A diff reads both commits' table states and finds their changes (lineage, else the
walk), so this proves what `log --stat`, `diff` and a merge across that edge need: the
states open, and their changes can be computed. Any failure is a `Problem` of check
"diff" whose `where` names the commit and the parent; nothing is changed.

Costs one diff per commit edge (O(changed rows) by lineage, O(rows) where only the walk
can answer): maintenance, not a hot path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlake.errors import GraphLakeError, clean_message
from graphlake.merge.diff import diff
from graphlake.recovery.fsck import FsckReport, Problem

if TYPE_CHECKING:
    from graphlake.repo import Repo


def check_diffs(repo: Repo, report: FsckReport) -> None:
    """Add a problem for every reachable commit that does not diff against a parent."""
    seen: set[str] = set()
    frontier = sorted({ref.commit for ref in repo.refs.list().values() if ref.commit})
    while frontier:
        cid = frontier.pop()
        if cid in seen:
            continue
        seen.add(cid)
        try:
            commit = repo.commits.get(cid)
        except GraphLakeError:
            continue  # the shallow check reports unreadable commits
        for parent in commit.parents:
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
