"""Rules a target branch sets for merges into it (the server's `[branches."NAME"]`).

The rules bind the HTTP server and the web UI. A program that opens the graph's files
directly (the library, the CLI on a local root) acts as an administrator, as git's
server-side hooks bind pushes, not the repository's owner: it passes no rules.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BranchRules"]


@dataclass(frozen=True)
class BranchRules:
    required_approvals: int = 0
    require_checks: bool = False
    merge_only_via_request: bool = False

    @property
    def any(self) -> bool:
        return bool(self.required_approvals or self.require_checks or self.merge_only_via_request)
