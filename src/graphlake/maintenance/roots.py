"""What `gc` must keep: every commit reachable from a live branch, a tag (or a
publication in flight), and every (table, Lance branch, version) those commits pin."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphlake.catalog.commits import Commit, TableState
from graphlake.catalog.reflog import kept_commits
from graphlake.errors import CommitNotFoundError

if TYPE_CHECKING:
    from graphlake.repo import Repo


@dataclass
class Roots:
    commits: set[str] = field(default_factory=set)
    # table_id -> Lance branch -> pinned versions
    pinned: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # table_id -> a graph table name

    def states(self, table_id: str) -> list[TableState]:
        return [
            TableState(table_id, branch, version, "gc")
            for branch, versions in sorted(self.pinned.get(table_id, {}).items())
            for version in sorted(versions)
        ]

    def _add(self, commit: Commit) -> None:
        self.commits.add(commit.id)
        for name, state in commit.tables.items():
            branches = self.pinned.setdefault(state.table_id, {})
            branches.setdefault(state.lance_branch, set()).add(state.version)
            self.names.setdefault(state.table_id, name)


def find_roots(repo: Repo, extra: Iterable[str] = (), reflog_since: str | None = None) -> Roots:
    """Walk the commit DAG from every live branch head, every tag, (with `reflog_since`,
    a commit time string) every commit a reflog entry written since then names, live
    branch or deleted, and `extra` commit ids."""
    roots = Roots()
    frontier = ref_targets(repo)
    if reflog_since is not None:
        frontier += kept_commits(repo.refs, reflog_since)
    frontier += [commit_id for commit_id in extra if repo.commits.exists(commit_id)]
    extend(repo, roots, frontier)
    return roots


def ref_targets(repo: Repo) -> list[str]:
    """The commits every live branch head and every tag names."""
    heads = [ref.commit for ref in repo.refs.list().values() if ref.commit]
    return heads + [tag.commit for tag in repo.tags.list().values()]


def extend(repo: Repo, roots: Roots, starts: Iterable[str], *, strict: bool = True) -> set[str]:
    """Add to `roots` every commit `starts` reach that it does not hold yet (and what
    they pin); returns the commits added. `strict=False` for starts no ref names (a
    young unreached commit, a pin): a commit missing below them is skipped, not an
    error (an earlier gc removed it)."""
    added: set[str] = set()
    frontier = list(starts)
    while frontier:
        todo = [c for c in dict.fromkeys(frontier) if c not in roots.commits]
        if not strict:
            todo = [c for c in todo if repo.commits.exists(c)]
        frontier = []
        try:
            commits = repo.commits.get_many(todo)
        except CommitNotFoundError as exc:
            # A reachable commit is missing: the graph is damaged, and what it pinned is
            # unknown. Removing anything now could destroy what is left.
            raise CommitNotFoundError(f"gc refuses to run: {exc} (see `graphlake fsck`)") from None
        for commit in commits:
            roots._add(commit)
            added.add(commit.id)
            frontier.extend(commit.parents)
    return added
