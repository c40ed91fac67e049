"""What a merge reports: outcome, commit, route per table, conflicts, probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from graphlake.merge.conflicts import Conflict

if TYPE_CHECKING:
    from graphlake.query.data_checks import CheckResult

Outcome = Literal["already_up_to_date", "fast_forward", "merged", "conflict"]
ALREADY_UP_TO_DATE: Final = "already_up_to_date"
FAST_FORWARD: Final = "fast_forward"
MERGED: Final = "merged"
CONFLICT: Final = "conflict"  # only reported by dry runs; a real merge raises MergeConflictError

# Routes per table, cheapest first.
Route = Literal["no_change", "pointer_adoption", "insertion_replay", "column_write", "three_way"]
NO_CHANGE: Final = "no_change"
POINTER_ADOPTION: Final = "pointer_adoption"
INSERTION_REPLAY: Final = "insertion_replay"
COLUMN_WRITE: Final = "column_write"  # the source only backfilled columns: written column-wise
THREE_WAY: Final = "three_way"


@dataclass
class TableStats:
    route: Route
    discovery: str = "none"  # how candidate keys were found: lineage, walk, same-state
    fallback: str | None = None  # why lineage was not used (a FallbackReason value)
    source_changes: int = 0
    target_changes: int = 0
    candidates: int = 0  # candidate keys whose rows were read at both states
    rows_scanned: int = 0  # rows discovery read (version deltas, or the whole walk)
    effects: int = 0  # rows the merge writes into the target (0 for pointer adoption)
    adopted_rows: int = 0  # rows joined by reference (zero-copy fragment adoption)
    # Search-index work on the merge's publish path (builds, folds, retrains): always 0,
    # since only `optimize` touches ANN and full-text indexes (probes, README "Search").
    vector_index_calls: int = 0
    fts_index_calls: int = 0
    # A property one side dropped while the other changed its values: the merge keeps the
    # drop and lists them here, {prop: {"count": n, "values": {key: value, ...}}}.
    dropped_values: dict[str, Any] = field(default_factory=dict)
    # A merge of one source over one base: the source's changes since the base, counted
    # as `diff(base, source)` counts them ({"inserted", "updated", "deleted"}), from the
    # discovery the merge did anyway (a merge request's preview reuses them). Not part of
    # the reported stats; None where the merge did not discover them.
    source_counts: dict[str, int] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        del out["source_counts"]
        return out


@dataclass
class MergeResult:
    outcome: Outcome
    source: str
    target: str
    commit: str | None = None  # the target's head after the merge
    base: str | None = None
    routes: dict[str, Route] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)  # unresolved (dry run only)
    resolved: list[Conflict] = field(default_factory=list)  # resolved by the strategy
    stats: dict[str, TableStats] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    dry_run: bool = False
    # With `checks=True`: each data check's result on the merged state (None: not run,
    # e.g. conflicts left no merged state to check).
    data_checks: list[CheckResult] | None = None

    @property
    def checks_passed(self) -> bool | None:
        """None when the checks did not run."""
        if self.data_checks is None:
            return None
        return all(r.passed for r in self.data_checks)

    def to_dict(self) -> dict[str, Any]:
        out = self._plain()
        if self.data_checks is not None:
            out["data_checks"] = [r.to_dict() for r in self.data_checks]
        return out

    def _plain(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "source": self.source,
            "target": self.target,
            "commit": self.commit,
            "base": self.base,
            "dry_run": self.dry_run,
            "routes": dict(self.routes),
            "conflicts": [c.to_dict() for c in self.conflicts],
            "resolved": [c.to_dict() for c in self.resolved],
            "stats": {k: v.to_dict() for k, v in self.stats.items()},
            "timings": dict(self.timings),
        }
