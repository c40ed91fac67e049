"""What `ingest` returns, and how a finished run is recorded (`done.json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphlake.merge.result import MergeResult, TableStats


@dataclass
class IngestResult:
    run_id: str
    into: str
    commit: str | None  # `into`'s head after the (last) merge
    rows: int  # records written, all workers and phases
    rows_per_worker: list[int]
    workers: int  # slices actually run (at most the workers asked for)
    merges: dict[str, MergeResult] = field(default_factory=dict)  # per phase
    timings: dict[str, float] = field(default_factory=dict)  # seconds
    resumed: bool = False  # an earlier attempt of this run had started
    already_complete: bool = False  # the run had finished before: nothing was done

    @property
    def merge(self) -> MergeResult | None:
        """The merge of the last phase (the only one unless JSONL mixes nodes and edges)."""
        return list(self.merges.values())[-1] if self.merges else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "into": self.into,
            "commit": self.commit,
            "rows": self.rows,
            "rows_per_worker": list(self.rows_per_worker),
            "workers": self.workers,
            "merges": {phase: m.to_dict() for phase, m in self.merges.items()},
            "timings": dict(self.timings),
            "resumed": self.resumed,
            "already_complete": self.already_complete,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> IngestResult:
        return cls(
            run_id=d["run_id"],
            into=d["into"],
            commit=d["commit"],
            rows=int(d["rows"]),
            rows_per_worker=[int(r) for r in d["rows_per_worker"]],
            workers=int(d["workers"]),
            merges={p: merge_result_from_dict(m) for p, m in d["merges"].items()},
            timings={k: float(v) for k, v in d["timings"].items()},
            resumed=bool(d.get("resumed", False)),
            already_complete=bool(d.get("already_complete", False)),
        )


def merge_result_from_dict(d: dict[str, Any]) -> MergeResult:
    """A recorded successful merge (no conflicts) back as a `MergeResult`."""
    return MergeResult(
        outcome=d["outcome"],
        source=d["source"],
        target=d["target"],
        commit=d["commit"],
        base=d["base"],
        routes=dict(d["routes"]),
        stats={k: TableStats(**v) for k, v in d["stats"].items()},
        timings=dict(d["timings"]),
        dry_run=bool(d["dry_run"]),
    )
