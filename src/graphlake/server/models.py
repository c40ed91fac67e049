"""Request and response bodies, as they appear in the OpenAPI schema."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

Row = dict[str, Any]
Key = StrictStr | StrictInt


class ErrorDetail(BaseModel):
    type: str = Field(description="The exception class name, e.g. `BranchNotFoundError`.")
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class ConflictBody(BaseModel):
    """One merge conflict, as `graphlake.Conflict.to_dict()`."""

    kind: str
    table: str
    entity_id: str
    message: str
    properties: list[str]
    base: Row | None
    source: Row | None
    target: Row | None
    resolution: str | None
    sides: list[str] | None = Field(
        default=None,
        description="merge_many: the two parties of the conflict, whose rows `rows` "
        "holds (null in a two-way merge: its source and target).",
    )
    between_sources: bool = Field(
        default=False,
        description="merge_many: a conflict between two sources (no strategy resolves it).",
    )
    rows: dict[str, Row | None] | None = Field(
        default=None,
        description="merge_many: each side's row under its name (the names in `sides`); "
        "`target` holds the target's row, also in a conflict between sources.",
    )


class MergeConflictBody(ErrorBody):
    merge_conflicts: list[ConflictBody]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str


# --- branches and history ------------------------------------------------------------------


class BranchInfo(BaseModel):
    name: str
    head: str = Field(description="Commit id of the branch head.")
    time: str
    message: str
    default: bool
    protected: bool


class BranchList(BaseModel):
    branches: list[BranchInfo]


class BranchCreate(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200, examples=["feature/x"])
    from_: str | None = Field(
        default=None,
        alias="from",
        description="Branch or commit id the new branch starts at (default: the default branch).",
    )


class TagCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, examples=["v1.0"])
    rev: str | None = Field(
        default=None,
        max_length=1000,
        description="Revision to tag (default: the default branch's head).",
    )
    message: str | None = Field(default=None, max_length=10_000)


class TagInfo(BaseModel):
    name: str
    commit: str
    time: str
    author: str
    message: str | None = None


class TagList(BaseModel):
    tags: list[TagInfo]


class CommitInfo(BaseModel):
    id: str
    parents: list[str]
    message: str
    time: str
    author: str = Field(
        "unknown",
        description="`Name <email>` or `Name` of whoever made "
        "the commit; `unknown` for commits made before authors were kept.",
    )


class Log(BaseModel):
    branch: str
    commits: list[CommitInfo]


# --- reading ---------------------------------------------------------------------------------


class Page(BaseModel):
    table: str
    commit: str = Field(description="The commit every page of this read comes from.")
    rows: list[Row]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class SqlRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, examples=["SELECT name, age FROM Person"])
    max_rows: int | None = Field(
        default=None,
        ge=1,
        description="Fail rather than return more rows (capped at the server's limit).",
    )


class SqlResult(BaseModel):
    commit: str
    columns: list[str]
    rows: list[list[Any]]


class PropertyChange(BaseModel):
    old: Any
    new: Any


class TableChanges(BaseModel):
    counts: dict[str, int] = Field(
        description="inserted / updated / deleted: all of them, however many rows are listed."
    )
    inserted: list[str] = Field(description="The first `limit` inserted ids.")
    updated: dict[str, list[str]] = Field(description="Changed properties per id.")
    deleted: list[str]
    changes: dict[str, dict[str, PropertyChange]] = Field(
        description="Per updated id, per changed property: old and new value."
    )
    inserted_rows: list[dict[str, Any]] = Field(description="Rows of `inserted`, in b.")
    deleted_rows: list[dict[str, Any]] = Field(description="Rows of `deleted`, in a.")
    endpoints: dict[str, list[str]] = Field(
        description="Edge tables: [src, dst] of every listed edge id."
    )
    truncated: bool = Field(description="True when some changes are counted, not listed.")


class Diff(BaseModel):
    a: str
    b: str
    tables: dict[str, TableChanges] = Field(description="Tables without changes are omitted.")
    schema_changes: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Schema steps from a's schema to b's (`kind`, `table`, `cost`, "
        "`description`), listed before any row change; empty if they share one.",
    )


# --- writing ---------------------------------------------------------------------------------


class Operation(BaseModel):
    """One staged change. `rows` for insert/upsert/update, `keys` for delete."""

    model_config = ConfigDict(extra="forbid")

    op: Literal["insert", "upsert", "update", "delete"]
    table: str = Field(min_length=1)
    rows: list[Row] | None = Field(
        default=None,
        description="Rows as JSON objects: dates as ISO strings, vectors as lists, blobs "
        "as base64.",
    )
    keys: list[Key] | None = Field(default=None, description="Node keys or edge ids.")
    cascade: bool = Field(default=False, description="Delete also the edges of deleted nodes.")

    @model_validator(mode="after")
    def _rows_or_keys(self) -> Self:
        if self.op == "delete":
            if self.keys is None or self.rows is not None:
                raise ValueError("a delete takes `keys` (and no `rows`)")
        else:
            if self.rows is None or self.keys is not None:
                raise ValueError(f"an {self.op} takes `rows` (and no `keys`)")
            if self.cascade:
                raise ValueError("`cascade` applies to delete only")
        return self


class MutationRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(default="write", max_length=10_000)
    operations: list[Operation] = Field(min_length=1)


class CommitRef(BaseModel):
    branch: str
    commit: str = Field(description="The branch head after the write.")


# --- merging ---------------------------------------------------------------------------------


Lineage = Literal["on", "off", "verify"]
LINEAGE_HELP = (
    "How changed rows are found: on (lineage, falling back to a walk), off (walk), "
    "verify (both, must agree). Default: the server's $GRAPHLAKE_MERGE_LINEAGE, "
    "else on."
)


RESOLUTIONS_HELP = (
    "Per-conflict resolutions: [{table, key, property (null: the whole row), "
    "take: ours | theirs | base | value | a merge_many side's name, value}]. "
    "Resolved values are validated like a write; the merge commit records "
    "them."
)


class MergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(
        min_length=1, description="Branch or any revision (commit id, dev~1, ...) to merge."
    )
    into: str | None = Field(default=None, description="Target branch (default: main).")
    strategy: Literal["ours", "theirs"] | None = Field(
        default=None,
        description="Resolve data conflicts: ours keeps the target's side, theirs the "
        "source's. Constraint violations are never resolved.",
    )
    dry_run: bool = False
    message: str | None = Field(default=None, max_length=10_000)
    lineage: Lineage | None = Field(default=None, description=LINEAGE_HELP)
    resolutions: list[dict[str, Any]] | None = Field(
        default=None, max_length=10_000, description=RESOLUTIONS_HELP
    )
    checks: bool = Field(
        default=False,
        description="Run the merged result's data checks on the merged state first "
        "(`data_checks` in the answer); a failing one refuses the merge (409 "
        "DataCheckFailedError). Always on for a target whose rule is require_checks.",
    )


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rev: str = Field(
        min_length=1,
        max_length=1000,
        description="The revision to move the branch to (any commit).",
    )


class ReflogEntryInfo(BaseModel):
    seq: int
    time: str
    author: str
    action: str
    old: str | None
    new: str | None


class Reflog(BaseModel):
    branch: str
    entries: list[ReflogEntryInfo]


class ApplyRequest(BaseModel):
    """A revert or cherry-pick of one commit's changes (see README "Who changed what")."""

    model_config = ConfigDict(extra="forbid")

    rev: str = Field(
        min_length=1,
        max_length=1000,
        description="The commit whose changes "
        "to undo or apply: a commit id (prefix), branch, tag, main~2, ...",
    )
    mainline: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="For a merge commit: the parent its changes are taken against.",
    )
    strategy: Literal["ours", "theirs"] | None = Field(
        default=None,
        description="Resolve data conflicts: ours keeps the branch's side, "
        "theirs the applied change's.",
    )
    dry_run: bool = False
    message: str | None = Field(default=None, max_length=10_000)


class MergeManyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(min_length=1, max_length=1024)
    into: str | None = Field(default=None, description="Target branch (default: main).")
    strict_disjoint: bool = Field(
        default=False, description="Refuse any key that two sources both changed."
    )
    strategy: Literal["ours", "theirs"] | None = Field(
        default=None,
        description="Resolve data conflicts with the target: ours keeps the target's side, "
        "theirs the sources'. Conflicts between two sources and constraint "
        "violations are never resolved.",
    )
    dry_run: bool = False
    message: str | None = Field(default=None, max_length=10_000)
    lineage: Lineage | None = Field(default=None, description=LINEAGE_HELP)
    checks: bool = Field(
        default=False,
        description="Run the merged result's data checks on the merged state first "
        "(`data_checks` in the answer); a failing one refuses the merge (409 "
        "DataCheckFailedError). Always on for a target whose rule is require_checks.",
    )


class MergeOutcome(BaseModel):
    """`graphlake.MergeResult.to_dict()`."""

    outcome: Literal["already_up_to_date", "fast_forward", "merged", "conflict"]
    source: str
    target: str
    commit: str | None
    base: str | None
    dry_run: bool
    routes: dict[str, str]
    conflicts: list[ConflictBody]
    resolved: list[ConflictBody]
    stats: dict[str, dict[str, Any]]
    timings: dict[str, float]
    data_checks: list[dict[str, Any]] | None = Field(
        default=None,
        description="With checks: each data check's result on the merged state (name, "
        "passed, up to 20 offending rows); absent when they did not run.",
    )


# --- merge requests (review before merge) ----------------------------------------------


class ReviewOpen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=1000, description="Branch to merge.")
    into: str | None = Field(
        default=None, max_length=1000, description="Target branch (default: main)."
    )
    title: str = Field(min_length=1, max_length=500)
    description: str = Field(default="", max_length=20_000)


class ReviewComment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=20_000)


class ReviewMerge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: Literal["ours", "theirs"] | None = None
    resolutions: list[dict[str, Any]] | None = Field(
        default=None, max_length=10_000, description=RESOLUTIONS_HELP
    )
