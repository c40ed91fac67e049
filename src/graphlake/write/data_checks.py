"""`Graph.set_data_checks`: publish a branch's data checks as one commit.

The new set replaces the branch's (an empty mapping removes them all). It is validated
first (query/data_checks.py: names, read queries that parse; `DataCheckError`, nothing
published), stored as a content-addressed document (storage/data_checks.py), and
published like any write: one recovery-recorded publication and one compare-and-swap of
the branch ref, retried on a moved head. The commit keeps the head's tables and schema
and names the new set (`Commit.checks_id`); its meta lists what changed
(`data_checks: {"set": [...], "removed": [...]}`). Setting the set the branch already has
publishes nothing and returns the head.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphlake.catalog.commits import Commit
from graphlake.catalog.intents import MergeIntents
from graphlake.query.data_checks import normalise
from graphlake.recovery.publication import Publication
from graphlake.retry import retry_while_head_moves
from graphlake.write.publish import MAX_ATTEMPTS

if TYPE_CHECKING:
    from graphlake.repo import Repo

__all__ = ["set_data_checks"]


def set_data_checks(
    repo: Repo, branch: str, checks: Mapping[str, Any], message: str | None = None
) -> Commit:
    """Replace `branch`'s data checks by `checks` ({name: query}); the new head."""
    repo.branch_ref(branch)  # a commit revision or unknown branch fails first
    wanted = normalise(checks)
    if message is not None and not isinstance(message, str):
        raise TypeError("message must be a string")
    return retry_while_head_moves(
        lambda: _set_once(repo, branch, wanted, message),
        branch=branch,
        what="write",
        attempts=MAX_ATTEMPTS,
        before_attempt=MergeIntents(repo.store).writer_gate(branch),
    )


def _set_once(
    repo: Repo, branch: str, wanted: dict[str, dict[str, str]], message: str | None
) -> Commit:
    ref, head = repo.branch_head(branch)
    current = repo.data_checks.of(head)
    if current == wanted:
        return head
    changed = sorted(n for n in wanted if current.get(n) != wanted[n])
    removed = sorted(n for n in current if n not in wanted)
    with Publication(repo, "write", branch, ref, action="data-checks") as pub:
        cid = repo.data_checks.put(wanted)
        commit = Commit.create(
            parents=(head.id,),
            message=message or _default_message(changed, removed),
            schema_id=head.schema_id,
            tables=head.tables,
            meta={"data_checks": {"set": changed, "removed": removed}},
            checks_id=cid,
        )
        pub.publish(commit)
    return commit


def _default_message(changed: list[str], removed: list[str]) -> str:
    parts = []
    if changed:
        parts.append("set " + ", ".join(changed))
    if removed:
        parts.append("remove " + ", ".join(removed))
    return "data checks: " + "; ".join(parts)
