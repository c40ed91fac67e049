"""`MergeRun`: one attempt of a merge-engine operation, the context passed down.

A merge, `merge_many`, revert or cherry-pick reads the target's head, classifies, then
publishes; when the head moves meanwhile the attempt runs again on the new head (a fresh
`MergeRun`). Everything an attempt's steps share travels in one frozen value instead of
a dozen arguments: the repo, the target branch and the ref entry read (the snapshot the
publish's compare-and-swap expects), the caller's options (strategy, dry run, strict
disjointness, discovery settings, message, extra commit meta, data checks), the
per-conflict resolutions of this attempt and its phase timer. The timer and the resolver
are the attempt's own mutable parts (timings add up; the resolver learns which
resolutions settled a conflict); nothing rebinds a field.

A virtual merge base (`merge.find_base`) classifies with a run that has no ref (it
publishes nothing): `MergeRun(repo, strategy="ours")`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ulid import ULID

from graphlake.errors import DataCheckFailedError, MergeError
from graphlake.merge.delta import DiscoverySettings
from graphlake.merge.timing import PhaseTimer

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.catalog.refs import RefEntry
    from graphlake.merge.resolutions import Resolver
    from graphlake.merge.result import MergeResult
    from graphlake.query.data_checks import CheckResult, Runner
    from graphlake.repo import Repo


# The merge commit's meta entries the merge records itself; a caller's `meta` may not
# set them (`check_meta`). `resolutions` comes from the run's own resolutions.
RECORDED_META = ("merge_base", "sources", "source_bases", "resolutions")


def check_meta(meta: Mapping[str, Any] | None) -> None:
    """`MergeError` when a caller's extra meta would overwrite what the merge records."""
    clash = [k for k in RECORDED_META if k in (meta or {})]
    if clash:
        raise MergeError(
            f"meta {', '.join(map(repr, clash))}: recorded by the merge itself (pass other names)"
        )


@dataclass(frozen=True)
class Checks:
    """Run the merged result's data checks (query/data_checks.py) with `runner`."""

    runner: Runner | None = None

    def run(self, repo: Repo, commit: Commit) -> list[CheckResult]:
        # on first use only: loads lance, duckdb, lark (start-up time)
        from graphlake.query.data_checks import run_checks

        # only when data checks run: read.snapshot opens Lance tables
        from graphlake.read.snapshot import Snapshot

        return run_checks(Snapshot(repo, commit), repo.data_checks.of(commit), self.runner)

    def enforce(self, repo: Repo, commit: Commit, result: MergeResult) -> None:
        """Record the checks' results on `commit` in `result`; raise if one failed
        (a real merge: nothing is published)."""
        result.data_checks = self.run(repo, commit)
        if not result.dry_run and not result.checks_passed:
            raise DataCheckFailedError(result.data_checks)


@dataclass(frozen=True)
class MergeRun:
    """One attempt of a merge-engine operation (see the module docstring)."""

    repo: Repo
    into: str = "target"  # the target branch (conflict reports name it)
    t_ref: RefEntry | None = None  # the target's head as this attempt read it
    strategy: str | None = None
    dry_run: bool = False
    strict_disjoint: bool = False
    settings: DiscoverySettings = field(default_factory=DiscoverySettings)
    resolver: Resolver | None = field(default=None, compare=False)
    message: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)  # extra merge-commit meta
    checks: Checks | None = None  # run the merged result's data checks
    timer: PhaseTimer = field(default_factory=PhaseTimer, compare=False)

    @property
    def ref(self) -> RefEntry:
        """The ref entry the publish's compare-and-swap expects."""
        if self.t_ref is None:
            raise AssertionError("this merge run read no target ref (a virtual merge)")
        return self.t_ref

    def branch_owner(self) -> str:
        """Who owns the Lance branches this run's table effects land on: the target's
        incarnation; for a dry run a fresh scratch name on every call (the dry run's
        scope, `TableStore.dry_run_scope`, deletes them)."""
        return f"dry-run-{ULID()}" if self.dry_run else self.ref.incarnation

    def still_current(self) -> bool:
        """Whether the target's head is still the one this attempt read."""
        return self.repo.refs.head(self.into) == self.t_ref

    def merge_message(self, names: Sequence[str]) -> str:
        """The merge commit's message: the caller's, else `merge a, b into target`."""
        return self.message or f"merge {', '.join(names)} into {self.into}"

    def merge_meta(
        self, base: str, names: Sequence[str], source_bases: Sequence[str] = ()
    ) -> dict[str, Any]:
        """The merge commit's meta, alike on every path (two-way, N-way, the fold
        across schemas): the caller's extra entries (`meta`, a merge request's id; the
        resolutions), then what the merge records itself (`RECORDED_META`)."""
        recorded: dict[str, Any] = {"merge_base": base, "sources": list(names)}
        if source_bases:  # each source's own base, when they were merged against several
            recorded["source_bases"] = list(source_bases)
        return {**self.meta, **recorded}

    def finish(self, result: MergeResult) -> MergeResult:
        """`result` with this attempt's phase timings."""
        result.timings = self.timer.rounded()
        return result
