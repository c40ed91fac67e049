"""`Graph.reviews`: open, approve, comment on, close and merge merge requests.

A request is stored by `catalog.reviews` (events appended by conditional create). This
layer adds what needs the merge engine and the branches:

- its *preview*: the dry-run merge of the source's head into the target's head (outcome,
  routes, conflicts), the merged result's data checks run on the would-be merged state
  (`data_checks`: per check passed / up to 20 offending rows; None while conflicts
  leave no merged state), a diff summary, and the approvals given at those heads. It is
  computed once per pair of heads and cached in memory (a read writes nothing to the
  graph root); a new commit on either branch makes the next preview compute again, and
  resets the approvals (each approval records the heads it saw);
- its *merge*: the source commit the checks saw, merged by the engine with the caller's
  resolutions and strategy; the merge commit records `meta.merge_request`, then the
  request records the merge commit (event "merged").

`rules` (review.rules.BranchRules) are passed by the server for the target branch;
without them (the library, the local CLI) only the request's own integrity holds: the
author never approves their own request, a request that is not open never changes.
"""

from __future__ import annotations

import builtins
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from graphlake.catalog.authors import Author, acting_as, current_author
from graphlake.catalog.commits import format_time
from graphlake.catalog.reviews import MergeRequest, ReviewStore
from graphlake.errors import DataCheckFailedError, MergeError, ReviewError, ReviewPermissionError
from graphlake.merge import engine
from graphlake.merge.diff import diff
from graphlake.merge.resolutions import parse_resolutions
from graphlake.merge.result import CONFLICT
from graphlake.review.rules import BranchRules

if TYPE_CHECKING:
    from graphlake.catalog.commits import Commit
    from graphlake.merge.result import MergeResult
    from graphlake.query.data_checks import Runner
    from graphlake.repo import Repo

# How far a request's merge commit may seem older than the request (clocks of the hosts
# that opened and merged it disagree): the walk for a merge that died unrecorded.
LANDED_SKEW = timedelta(minutes=10)

__all__ = ["Reviews"]

_CACHE_SIZE = 256
MAX_COMMENT = 20_000


def _who(by: str | Author | None) -> str:
    if by is None:
        return current_author().name
    if isinstance(by, Author):
        return by.name
    if not isinstance(by, str) or not by.strip():
        raise ReviewError("'by' names who acts: a non-empty string")
    return by


class Reviews:
    """The merge requests of one graph (one instance per `Graph`: it holds the cache)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.store = ReviewStore(repo.store)
        self._cache: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def on_change(self) -> list[Callable[[MergeRequest, dict[str, Any]], None]]:
        """Callbacks `(request, event)` after every state change (for webhooks)."""
        return self.store.on_change

    # --- reading -------------------------------------------------------------------------

    def get(self, rid: int) -> MergeRequest:
        return self.store.get(rid)

    def list(self, state: str | None = None) -> builtins.list[MergeRequest]:
        return self.store.list(state)

    def heads(self, mr: MergeRequest) -> tuple[str, str]:
        """(source head, target head) as they are now."""
        return self.repo.resolve(mr.source).id, self.repo.branch_head(mr.into)[1].id

    def preview(
        self,
        rid: int | MergeRequest,
        rules: BranchRules | None = None,
        runner: Runner | None = None,
    ) -> dict[str, Any]:
        """What merging the request now would do, and whether its rules hold.
        `runner` runs the data checks' queries (the server's: in a query worker)."""
        mr = rid if isinstance(rid, MergeRequest) else self.get(rid)
        if mr.state != "open":
            return {"state": mr.state, "merge_commit": mr.merge_commit}
        source_head, target_head = self.heads(mr)
        merged = self._dry_run(mr, source_head, target_head, runner)
        approvals = [
            a.to_dict() for a in mr.current_approvals(source_head, target_head) if a.by != mr.author
        ]
        out = {
            **merged,
            "source_head": source_head,
            "target_head": target_head,
            "approvals": approvals,
        }
        out["blocked_by"] = self._blockers(mr, out, rules)
        out["mergeable"] = not out["blocked_by"]
        return out

    def _dry_run(
        self, mr: MergeRequest, source_head: str, target_head: str, runner: Runner | None
    ) -> dict[str, Any]:
        key = (source_head, target_head, mr.into)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        result = engine.merge(
            self.repo, source_head, mr.into, dry_run=True, checks=True, check_runner=runner
        )
        summary: dict[str, dict[str, int]] = {}
        if result.outcome != "already_up_to_date":
            summary = self._diff_counts(result, result.base or target_head, source_head)
        computed = {
            "outcome": result.outcome,
            "base": result.base,
            "routes": dict(result.routes),
            "conflicts": [c.to_dict() for c in result.conflicts],
            "diff": summary,
            "data_checks": (
                None if result.data_checks is None else [r.to_dict() for r in result.data_checks]
            ),
        }
        if result.target != mr.into or self.repo.branch_head(mr.into)[1].id != target_head:
            return computed  # the target moved while computing: do not cache
        with self._lock:
            self._cache[key] = computed
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return computed

    def _diff_counts(
        self, result: MergeResult, base: str, source_head: str
    ) -> dict[str, dict[str, int]]:
        """Per table, what `diff(base, source)` counts: taken from the dry run's own
        discovery where it has them (one source over one base, one schema), so the
        preview does not discover the same changes twice; a diff for the other tables."""
        ca, cb = self.repo.resolve(base), self.repo.resolve(source_head)
        reuse = ca.schema_id == cb.schema_id
        summary: dict[str, dict[str, int]] = {}
        rest: set[str] = set()
        for table in cb.tables:
            stats = result.stats.get(table)
            if not reuse or stats is None or table not in ca.tables:
                rest.add(table)
            elif stats.source_counts is not None:
                if any(stats.source_counts.values()):
                    summary[table] = dict(stats.source_counts)
            elif stats.discovery != "same-state":
                rest.add(table)  # changed, but the dry run did not count it (a backfill)
        if rest:
            for table, changes in diff(self.repo, base, source_head, limit=0, only=rest).items():
                summary[table] = dict(changes.counts)
        return dict(sorted(summary.items()))

    @staticmethod
    def _blockers(
        mr: MergeRequest, preview: Mapping[str, Any], rules: BranchRules | None
    ) -> builtins.list[str]:
        out = []
        if preview["outcome"] == CONFLICT:
            out.append(f"{len(preview['conflicts'])} unresolved conflict(s)")
        checks = preview.get("data_checks")
        if rules is not None and rules.require_checks and checks is not None:
            failing = [c["name"] for c in checks if not c["passed"]]
            if failing:
                out.append(
                    f"require_checks: {len(failing)} data check(s) fail on the merged "
                    f"result: {', '.join(failing)}"
                )
        if rules is not None and len(preview["approvals"]) < rules.required_approvals:
            out.append(
                f"required_approvals: {len(preview['approvals'])} of "
                f"{rules.required_approvals} approval(s) at the current heads"
            )
        return out

    # --- changing ------------------------------------------------------------------------

    def open(
        self,
        source: str,
        into: str,
        title: str,
        description: str = "",
        author: str | Author | None = None,
    ) -> MergeRequest:
        """A new open request to merge branch `source` into branch `into`."""
        if source == into:
            raise MergeError(f"cannot merge branch {into!r} into itself")
        self.repo.branch_ref(source)  # both must be live branches (typed errors)
        self.repo.branch_ref(into)
        return self.store.open(source, into, title, description, _who(author))

    def approve(self, rid: int, by: str | Author | None = None) -> MergeRequest:
        """Approve at the current heads; the author cannot approve their own request."""
        who = _who(by)

        def check(mr: MergeRequest) -> None:
            if mr.author == who:
                raise ReviewPermissionError(
                    f"{who!r} opened merge request {rid}: the author of a request cannot approve it"
                )

        mr = self.get(rid)
        check(mr)
        source_head, target_head = self.heads(mr)
        return self.store.append(
            rid, "approved", who, {"source_head": source_head, "target_head": target_head}, check
        )

    def comment(self, rid: int, text: str, by: str | Author | None = None) -> MergeRequest:
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_COMMENT:
            raise ReviewError(
                f"a comment is a non-empty string of at most {MAX_COMMENT} characters"
            )
        return self.store.append(rid, "commented", _who(by), {"text": text})

    def close(self, rid: int, by: str | Author | None = None) -> MergeRequest:
        """Close without merging (a closed request never changes again)."""
        return self.store.append(rid, "closed", _who(by))

    def merge(
        self,
        rid: int,
        resolutions: Sequence[Mapping[str, Any]] | None = None,
        strategy: str | None = None,
        by: str | Author | None = None,
        rules: BranchRules | None = None,
        lineage: str | None = None,
        runner: Runner | None = None,
    ) -> MergeRequest:
        """Merge the request's source into its target as one commit recording the
        request's id, then mark the request merged. Conflicts the resolutions and
        strategy leave raise `MergeConflictError` (nothing changes); with `rules`,
        too few approvals at the current heads raise `ReviewPermissionError`, and with
        `rules.require_checks` the merged result's data checks run before the merge
        publishes (`runner` runs their queries): a failing one raises
        `DataCheckFailedError` naming the rule, and nothing is published.
        The returned request's `result` is the `MergeResult`."""
        who = _who(by)
        mr = self.get(rid)
        self.store.check_open(mr, "merged")
        source_head, target_head = self.heads(mr)
        landed = self._landed(mr, target_head)
        if landed is not None:  # a merge of this request published, then its process
            return self._record_landed(mr, landed, who)  # died before recording it
        if rules is not None:
            given = [a for a in mr.current_approvals(source_head, target_head) if a.by != mr.author]
            if len(given) < rules.required_approvals:
                raise ReviewPermissionError(
                    f"branch {mr.into!r} rule required_approvals = "
                    f"{rules.required_approvals}: merge request {rid} has {len(given)} "
                    "approval(s) at the current heads of its branches (a new commit on "
                    "either branch resets approvals)"
                )
        checks = rules is not None and rules.require_checks
        try:
            with acting_as(who):
                result = engine.merge(
                    self.repo,
                    source_head,
                    mr.into,
                    strategy=strategy,
                    message=f"merge request #{rid}: {mr.title} ({mr.source} into {mr.into})",
                    lineage=lineage,
                    resolutions=resolutions,
                    meta={"merge_request": rid, "source_branch": mr.source},
                    checks=checks,
                    check_runner=runner,
                )
        except DataCheckFailedError as exc:
            names = ", ".join(r.name for r in exc.results if not r.passed)
            raise DataCheckFailedError(
                exc.results,
                f"branch {mr.into!r} rule require_checks = true: data check(s) {names} "
                f"fail on the merged result of merge request {rid}; nothing was published",
            ) from None
        merged = self.store.append(
            rid,
            "merged",
            who,
            {
                "commit": result.commit,
                "outcome": result.outcome,
                "source_head": source_head,
                "resolutions": [r.to_dict() for r in parse_resolutions(resolutions)],
            },
        )
        merged.result = result
        return merged

    def _landed(self, mr: MergeRequest, head: str) -> Commit | None:
        """The merge commit of `mr` on its target's first-parent line: a merge of it that
        published before its process died (so it never recorded "merged"). The walk
        stops at commits older than the request (less LANDED_SKEW for clocks that
        disagree), so a request merge reads only the commits made since it was opened."""
        commits = self.repo.commits
        since = format_time(datetime.fromisoformat(mr.created) - LANDED_SKEW)
        cid: str | None = head
        while cid is not None:
            commit = commits.get(cid)
            if commit.meta.get("merge_request") == mr.id:
                return commit
            if commit.time < since:
                return None
            cid = commit.parents[0] if commit.parents else None
        return None

    def _record_landed(self, mr: MergeRequest, commit: Commit, who: str) -> MergeRequest:
        merged = self.store.append(
            mr.id,
            "merged",
            who,
            {
                "commit": commit.id,
                "outcome": "merged",
                "source_head": commit.parents[1] if len(commit.parents) > 1 else None,
                "resolutions": commit.meta.get("resolutions") or [],
                "recovered": True,
            },
        )
        merged.result = None
        return merged
