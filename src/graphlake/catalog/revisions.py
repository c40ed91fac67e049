"""Revisions: the git-style names a reader may give a commit, parsed and resolved here only.

Grammar (no spaces)::

    range := rev "..." rev          the commits from the merge base of the two to the second
    rev   := base step*
    base  := branch or tag name | commit id (40 hex characters, or a unique prefix of >= 7)
    step  := "~" [N]                the N-th first-parent ancestor (`~` alone: N = 1)
           | "^" [N]                the N-th parent (`^` alone: N = 1; `^0`: the commit)

e.g. `main`, `3f2a9c1`, `main~2`, `dev^2`, `main~2^2~1`, `main...dev`. Branch names cannot
contain `~` or `^` (see names.py), so the base ends at the first of them. A name that is
an existing branch (or tag: they share one namespace) is always that branch or tag, even
if it looks like a commit id prefix or contains `...` (a branch may legally be called
`a...b`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphlake.catalog.commits import (
    COMMIT_ID_LENGTH,
    MIN_PREFIX_LENGTH,
    Commit,
    CommitStore,
)
from graphlake.catalog.history import History
from graphlake.catalog.names import validate_branch_name
from graphlake.catalog.refs import RefStore
from graphlake.catalog.tags import TagStore
from graphlake.errors import (
    AmbiguousRevisionError,
    AncestorNotFoundError,
    BranchNotFoundError,
    GraphLakeError,
    InvalidNameError,
    NotABranchError,
    RevisionError,
    RevisionSyntaxError,
    UnknownRevisionError,
)
from graphlake.hints import nearest

__all__ = ["RANGE", "Resolver", "Revision", "RevisionRange", "parse_revision", "split_range"]

RANGE = "..."
_STEP = re.compile(r"([~^])(\d{0,9})")
_HEX = re.compile(r"[0-9a-f]+")
_NEAREST = 3
_LISTED = 10


@dataclass(frozen=True)
class Revision:
    """A parsed `rev`: its base name and the `~`/`^` steps after it, in order."""

    text: str
    base: str
    steps: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class RevisionRange:
    """`A...B`: from the merge base(s) of A and B to B."""

    text: str
    bases: tuple[Commit, ...]
    end: Commit

    def single_base(self) -> Commit:
        """The one merge base; a typed error if a criss-cross history has several."""
        if len(self.bases) != 1:
            ids = ", ".join(b.id[:12] for b in self.bases)
            raise RevisionError(
                f"{self.text!r} has {len(self.bases)} merge bases ({ids}); "
                "name one of them instead of the range"
            )
        return self.bases[0]


def split_range(text: str) -> tuple[str, str] | None:
    """(A, B) for `A...B`, None for a single revision; malformed ranges raise."""
    if RANGE not in text:
        return None
    a, _, b = text.partition(RANGE)
    if not a or not b or RANGE in b:
        raise RevisionSyntaxError(
            f"invalid range {text!r}: write it as A...B with a revision on each side"
        )
    return a, b


def parse_revision(text: str) -> Revision:
    """Split `text` into base and steps; raises `RevisionSyntaxError` if malformed."""
    if not isinstance(text, str) or not text:
        raise RevisionSyntaxError(f"invalid revision {text!r}: it is empty")
    cut = min((i for i in (text.find("~"), text.find("^")) if i >= 0), default=len(text))
    base, rest = text[:cut], text[cut:]
    if not base:
        raise RevisionSyntaxError(
            f"invalid revision {text!r}: it must start with a branch name or commit id"
        )
    steps: list[tuple[str, int]] = []
    pos = 0
    while pos < len(rest):
        match = _STEP.match(rest, pos)
        if match is None or (match.end() < len(rest) and rest[match.end()] not in "~^"):
            bad = cut + (match.end() if match else pos)
            raise RevisionSyntaxError(
                f"invalid revision {text!r}: unexpected {text[bad]!r} at position {bad} "
                "(after ~ or ^ only a number may follow, e.g. main~2^2)"
            )
        op, digits = match.groups()
        steps.append((op, int(digits) if digits else 1))
        pos = match.end()
    return Revision(text, base, tuple(steps))


class Resolver:
    """Turns revisions into commits for one graph's refs and commits."""

    def __init__(
        self, refs: RefStore, commits: CommitStore, history: History, tags: TagStore | None = None
    ) -> None:
        self._refs = refs
        self._commits = commits
        self._history = history
        self._tags = tags

    # --- single revisions ---------------------------------------------------------------

    def commit(self, text: str) -> Commit:
        """The commit `text` names (not a range)."""
        head = self._branch_head(text)
        if head is not None:
            return head
        if isinstance(text, str) and RANGE in text:
            split_range(text)  # a malformed range gets the syntax error
            raise RevisionError(
                f"{text!r} is a range; name one commit here (a range A...B is given alone, "
                "to diff or log)"
            )
        rev = parse_revision(text)
        commit = self._base(rev)
        done = rev.base
        for op, n in rev.steps:
            commit = self._step(commit, op, n, text, done)
            done += op + str(n)
        return commit

    def range(self, text: str) -> RevisionRange | None:
        """The range `text` names, or None if it is a single revision (or a branch)."""
        if not isinstance(text, str) or self._branch_head(text) is not None:
            return None
        parts = split_range(text)
        if parts is None:
            return None
        a, b = (self.commit(p) for p in parts)
        base_ids = self._history.merge_bases(a.id, b.id)
        if not base_ids:
            raise RevisionError(f"{parts[0]!r} and {parts[1]!r} have no common ancestor")
        return RevisionRange(text, tuple(self._commits.get_many(base_ids)), b)

    # --- branches for writing -----------------------------------------------------------

    def branch_error(self, name: str) -> GraphLakeError:
        """Why `name` cannot be written to: it names a commit, is malformed or unknown."""
        if isinstance(name, str) and name and any(c in name for c in "~^"):
            return NotABranchError(_needs_branch(name))
        validate_branch_name(name)  # an invalid name raises InvalidNameError as before
        try:
            self.commit(name)
        except RevisionError:
            nearest = self._nearest(name)
            return BranchNotFoundError(f"no branch {name!r}{_suggest(nearest, self._names())}")
        return NotABranchError(_needs_branch(name))

    # --- helpers ------------------------------------------------------------------------

    def _branch_head(self, name: object) -> Commit | None:
        try:  # head() validates the name (once per name: refs._branch_dir)
            ref = self._refs.head(name)  # type: ignore[arg-type]
        except InvalidNameError:
            return None
        if ref is None or ref.commit is None:
            tag = self._tags.get(name) if self._tags is not None else None  # type: ignore[arg-type]
            return self._commits.get(tag.commit) if tag is not None else None
        return self._commits.get(ref.commit)

    def _base(self, rev: Revision) -> Commit:
        if rev.base != rev.text:
            head = self._branch_head(rev.base)
            if head is not None:
                return head
        base = rev.base
        if _HEX.fullmatch(base) and MIN_PREFIX_LENGTH <= len(base) <= COMMIT_ID_LENGTH:
            matches = self._commits.matching(base)
            if len(matches) == 1:
                return self._commits.get(matches[0])
            if len(matches) > 1:
                raise AmbiguousRevisionError(
                    f"commit id prefix {base!r} is ambiguous: it matches "
                    f"{', '.join(m[:12] for m in matches)}; give more characters",
                    matches,
                )
        try:
            validate_branch_name(base)
        except InvalidNameError as exc:
            why = str(exc).split(": ", 1)[-1]
            raise RevisionSyntaxError(f"invalid revision {rev.text!r}: {why}") from None
        nearest = self._nearest(base)
        hint = _suggest(nearest, self._names())
        if ".." in rev.text:
            hint += " (a range is written A...B, with three dots)"
        raise UnknownRevisionError(
            f"unknown revision {rev.text!r}: no branch or commit {base!r}{hint}", nearest
        )

    def _step(self, commit: Commit, op: str, n: int, text: str, done: str) -> Commit:
        if op == "^":
            if n == 0:
                return commit
            if n > len(commit.parents):
                have = f"only {len(commit.parents)} parent(s)" if commit.parents else "no parent"
                raise AncestorNotFoundError(
                    f"revision {text!r}: {done} ({commit.id[:12]}) has {have}, "
                    f"so {done}^{n} does not exist"
                )
            return self._commits.get(commit.parents[n - 1])
        for walked in range(n):
            if not commit.parents:
                raise AncestorNotFoundError(
                    f"revision {text!r} goes past the root: {done}~{walked} "
                    f"({commit.id[:12]}) has no parent"
                )
            commit = self._commits.get(commit.parents[0])
        return commit

    def _names(self) -> list[str]:
        return sorted(self._refs.list())

    def _nearest(self, name: str) -> list[str]:
        return nearest(name, self._names(), n=_NEAREST)


def _suggest(nearest: list[str], names: list[str]) -> str:
    """`(did you mean ...?)` with the nearest names, else the branches there are."""
    if nearest:
        return f" (did you mean {', '.join(nearest)}?)"
    shown = ", ".join(names[:_LISTED]) or "none"
    more = f", +{len(names) - _LISTED} more" if len(names) > _LISTED else ""
    return f" (branches: {shown}{more})"


def _needs_branch(name: str) -> str:
    return (
        f"{name!r} names a commit, not a branch: writing needs a branch name "
        f"(to write there, create one: branch create NAME --from {name!r})"
    )
