"""Typed errors. Every failure a caller can cause is a subclass of `GraphLakeError`.

A failed operation leaves the graph exactly as it was; the message says what to fix.
"""

from __future__ import annotations

import re

# Lance appends the Rust source location of its build to error messages
# (", /home/runner/work/lance/lance/rust/.../scanner.rs:839:33"): noise for a user.
_RUST_LOCATION = re.compile(r",?\s*/[^\s,]*\.rs:\d+:\d+")


def clean_message(exc: BaseException) -> str:
    """The first line of `exc`'s message, without a dependency's source locations."""
    text = _RUST_LOCATION.sub("", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class GraphLakeError(Exception):
    """Base class of every error graphlake raises on purpose."""


# --- schema -----------------------------------------------------------------------------


class SchemaError(GraphLakeError):
    """The schema text is malformed or inconsistent. Names the line and column when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"schema error: {where}{message}")


class CheckPatternError(SchemaError):
    """A stored schema's `@check` pattern RE2 cannot run within graphlake's caps (a graph
    written by a version that used Python's `re`). The graph opens and reads; writes that
    need the check fail with this error until a schema change replaces the pattern."""

    def __init__(self, message: str, pattern: str):
        self.pattern = pattern
        super().__init__(message)


class SchemaChangeError(GraphLakeError):
    """A schema change (`Graph.apply_schema`) cannot be applied; the branch is unchanged."""


class SchemaDropError(SchemaChangeError):
    """A schema change would drop stored values (a property's non-null values, a type's
    rows) and was not given `allow_drop=True` (CLI `--allow-drop`, HTTP `allow_drop`). The
    message counts what it would drop and suggests `@renamed_from` for a likely rename."""


class SchemaChangeRefusedError(SchemaChangeError):
    """A change no data could make safe: a new `@key`, another Vector dimension, a cast
    that can change values, an edge's endpoints. The message says what to do instead."""


class SchemaUnchangedError(SchemaChangeError):
    """The applied schema describes the same graph as the branch's: nothing published."""


class SchemaDataError(SchemaChangeError):
    """The branch's rows violate a schema change (a narrowing, a new constraint).
    `.keys` holds up to 20 offending row keys (node keys or edge ids)."""

    def __init__(self, message: str, keys: list[str] | None = None):
        self.keys = list(keys or [])
        super().__init__(message)


# --- names, graphs, branches, commits ---------------------------------------------------


class InvalidNameError(GraphLakeError):
    """A branch, table or run name is not allowed (it could escape the graph root)."""


class NotAGraphError(GraphLakeError):
    """The URI does not hold a graphlake graph."""


class GraphExistsError(GraphLakeError):
    """`Graph.init` was pointed at a URI that already holds a graph."""


class BranchNotFoundError(GraphLakeError):
    """No branch of that name."""


class BranchExistsError(GraphLakeError):
    """A branch of that name exists already."""


class CommitNotFoundError(GraphLakeError):
    """No commit with that id."""


class RevisionError(GraphLakeError):
    """A revision (`main~2`, a commit id prefix, `A...B`) cannot be used as given."""


class RevisionSyntaxError(RevisionError, InvalidNameError):
    """A revision is malformed (bad characters, `~x`, nothing before `~`/`^`)."""


class UnknownRevisionError(RevisionError, BranchNotFoundError, CommitNotFoundError):
    """No branch or commit of that name; `.nearest` holds the closest branch names."""

    def __init__(self, message: str, nearest: list[str] | None = None):
        self.nearest = list(nearest or [])
        super().__init__(message)


class AmbiguousRevisionError(RevisionError):
    """A commit id prefix matches several commits; `.candidates` lists them."""

    def __init__(self, message: str, candidates: list[str]):
        self.candidates = list(candidates)
        super().__init__(message)


class AncestorNotFoundError(RevisionError, CommitNotFoundError):
    """`REV~N` goes past the root, or `REV^N` names a parent the commit does not have."""


class NotABranchError(RevisionError, InvalidNameError):
    """A writing command was given a commit revision; writes need a branch name."""


class InvalidAuthorError(GraphLakeError):
    """An author is malformed (`Name <email>`, one printable line, see catalog/authors)."""


class BranchPermissionError(GraphLakeError):
    """The caller's token may not change this branch (its `branches` rule); HTTP 403."""


class TagExistsError(BranchExistsError):
    """A tag of that name exists already (tags never move), or a branch has the name."""


class TagNotFoundError(BranchNotFoundError):
    """No tag of that name."""


class ConcurrentWriteError(GraphLakeError):
    """Another writer moved the branch first and retrying did not succeed."""


class StaleReadError(ConcurrentWriteError):
    """What the transaction read (or the head it expected) changed before it could
    publish. Nothing was written; run the transaction again on fresh reads
    (`Graph.transact` does that for you)."""


# --- data -------------------------------------------------------------------------------


class DataError(GraphLakeError):
    """Rows do not fit the schema or the graph. Nothing was written."""


class UnknownTableError(DataError):
    """No node or edge type of that name in the schema."""


class UnknownPropertyError(DataError):
    """A row names a property its type does not declare."""


class TypeMismatchError(DataError):
    """A value does not have the property's type."""


class NullValueError(DataError):
    """A non-nullable property is missing or null."""


class DuplicateKeyError(DataError):
    """A key occurs twice in a batch, or an inserted key exists already."""


class KeyNotFoundError(DataError):
    """An update or delete names a key that does not exist."""


class RowNotFoundError(KeyNotFoundError):
    """Row history or blame of a key that no commit of the branch's first-parent history
    holds (blame: that the branch's head does not hold). HTTP 404."""


class ValueConstraintError(DataError):
    """An enum, `@range` or `@check` constraint is violated, or a node key, edge id or
    edge endpoint is the empty string."""


class UniqueViolationError(DataError):
    """A `@unique` constraint is violated."""


class MissingEndpointError(DataError):
    """An edge names a source or destination node that does not exist."""


class CardinalityError(DataError):
    """An edge type's `@card(min..max)` per source node is exceeded."""


class NodeHasEdgesError(DataError):
    """A node still has edges; delete with `cascade=True` to remove them too."""


class LoadFormatError(DataError):
    """An input file is malformed. Names the file and line when known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(f"{where}{message}")


# --- queries ----------------------------------------------------------------------------


class QueryError(GraphLakeError):
    """A SQL query failed, or tried something a read-only snapshot does not allow."""


class QueryTimeoutError(QueryError):
    """A query ran past its time limit (parse, plan, prefetch, execution and result) and
    was stopped; the message names the limit to raise. HTTP 408."""


class QueryTooLargeError(QueryError):
    """A query needed more memory than its limit, or its generated SQL or result passed a
    size cap; it was stopped and nothing changed. HTTP 413."""


class AdjacencyTooLargeError(QueryTooLargeError):
    """An edge table's adjacency would pass the memory limit it must fit in (refused from
    row counts, before anything is read). Cypher then answers with its SQL plan; graph
    algorithms, which need the adjacency, report it. HTTP 413."""


class SearchError(QueryError):
    """A search request (bad vector, k, text or property) or an upkeep threshold is malformed
    (see README "Search")."""


class AlgorithmError(QueryError):
    """A graph algorithm cannot run as asked: an unknown algorithm, a parameter out of
    range (damping outside (0, 1), iterations past the cap, a tolerance not above 0), a
    weight property that is not numeric or holds a null or negative weight. The message
    names the parameter and its allowed values; nothing ran."""


class AlgorithmMemoryError(AlgorithmError, QueryTooLargeError):
    """A graph algorithm would need more memory than its limit (estimated from the edge
    type's node and edge counts before it starts): it did not run, no partial answer.
    HTTP 413."""


class CypherError(QueryError):
    """A Cypher query cannot run as written. Names the line and column when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"cypher: {where}{message}")


class CypherSyntaxError(CypherError):
    """The query text is not valid Cypher (of the supported subset)."""


class CypherNameError(CypherError):
    """An unknown label, relationship type, property, variable or function."""


class CypherTypeError(CypherError):
    """Values of incompatible types meet (a string compared with a number, ...)."""


class CypherWriteError(CypherError):
    """A write clause (CREATE, MERGE, SET, ...): queries are read-only."""


class CypherParameterError(CypherError):
    """A `$parameter` is missing or has a value of the wrong type."""


class CypherProcedureError(CypherError, AlgorithmError):
    """A `CALL` names no known procedure (the message lists them) or passes it arguments
    it does not take (a parameter out of range, an unknown option, a YIELD column it does
    not have); nothing ran."""


# --- merge ------------------------------------------------------------------------------


class MergeError(GraphLakeError):
    """A merge cannot run (no common ancestor, schema differs, bad arguments)."""


class MergeConflictError(MergeError):
    """A merge found conflicts; nothing was published. See `.conflicts`."""

    def __init__(self, conflicts: list, message: str | None = None):
        self.conflicts = list(conflicts)
        if message is None:
            kinds: dict[str, int] = {}
            for c in self.conflicts:
                kinds[c.kind] = kinds.get(c.kind, 0) + 1
            summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            message = f"merge has {len(self.conflicts)} conflict(s): {summary}"
        super().__init__(message)


class DataCheckError(GraphLakeError):
    """A data check is malformed: a bad name, not a read query, or it does not parse.
    Refused when set; nothing was published."""


class DataCheckFailedError(MergeError):
    """A merge with `checks=True` would publish a state on which a data check fails
    (returns rows, or cannot run); nothing was published. See `.results`."""

    def __init__(self, results: list, message: str | None = None):
        self.results = list(results)
        if message is None:
            failed = [r.name for r in self.results if not r.passed]
            message = (
                f"{len(failed)} data check(s) fail on the merged result: {', '.join(failed)}; "
                "nothing was published"
            )
        super().__init__(message)


class MergeMemoryError(MergeError):
    """The memory-bounded walk could not stay within its budget; nothing was published."""


class HistoryUnreadableError(GraphLakeError):
    """A commit's pinned table state cannot be read (its Lance version or files are
    gone): the message names the commit and the table. `graphlake fsck --deep` lists
    every such commit."""


class ApplyCommitError(MergeError):
    """A revert or cherry-pick cannot be applied as asked: the commit has no parent (a
    root commit), or `mainline` is out of range or given for a commit that is no merge."""


class LineageMismatchError(MergeError):
    """`lineage="verify"`: lineage discovery and the walk found different changes."""


# --- change feed ------------------------------------------------------------------------


class ChangeFeedError(GraphLakeError):
    """A change-feed request cannot be served as asked: a limit out of range, or a
    cursor that is malformed, not this graph's, or for another branch (HTTP 400)."""


class CursorExpiredError(ChangeFeedError):
    """The cursor's commit is gone (`gc` removed it after the branch moved away from
    it): `.oldest` names the oldest point the feed can resume from (HTTP 410)."""

    def __init__(self, message: str, oldest: str):
        self.oldest = oldest
        super().__init__(message)


class CursorResetError(ChangeFeedError):
    """The branch was reset past the cursor (its commit is no longer on the branch's
    first-parent history): `.head` names the branch's new head (HTTP 409)."""

    def __init__(self, message: str, head: str):
        self.head = head
        super().__init__(message)


class MissingExtraError(GraphLakeError, ImportError):
    """An optional integration was asked for without its extra installed; the message
    is one line naming the `pip install` to run."""


class ReaderError(GraphLakeError, ValueError):
    """A reader (scan, PyTorch, Ray, Hugging Face, Polars) was given arguments it
    cannot honour: `rank >= world_size`, a batch size below 1, a Blob column asked for
    as a tensor (any `blobs=` but "lazy" or "bytes"); or a lazy blob handle whose pinned
    table state is gone (its reader's lease ended and gc ran)."""


class ResolutionError(MergeError):
    """A per-conflict resolution is malformed or names no conflict; nothing was published."""


class ResolutionTypeError(ResolutionError, TypeMismatchError):
    """A resolution's value does not have its property's type."""


class ReviewError(GraphLakeError):
    """A merge request operation cannot run."""


class ReviewNotFoundError(ReviewError):
    """No merge request has this id."""


class ReviewStateError(ReviewError):
    """The merge request is not open (merged or closed): it cannot change any more."""


class ReviewPermissionError(ReviewError):
    """A merge request rule refuses this: approving your own request, too few approvals,
    or a merge into a branch that accepts merges only through requests."""
