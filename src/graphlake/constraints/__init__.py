"""Constraint checks shared by writes and merges, each returning every violation found.

A check is scoped to a change set (`TablePlan`s against one pinned head): it probes the
head through its indexes for the touched keys only. Writes raise on the first kind that
has violations; merges report them all as conflicts.
"""

from graphlake.constraints.violation import Violation

__all__ = ["Violation"]
