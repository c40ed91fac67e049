"""A branch's schema: read it, and change it as one commit (`Graph.apply_schema`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from graphlake.server.auth import ReadScope, WriteScope, check_not_protected
from graphlake.server.deps import State
from graphlake.server.routes.common import READ_ERRORS, WRITE_ERRORS, BranchPath, errors
from graphlake.server.routing import ThreadedJsonRoute

router = APIRouter(tags=["schema"], route_class=ThreadedJsonRoute)


class SchemaBody(BaseModel):
    revision: str
    commit: str = Field(description="The commit whose schema this is.")
    schema_: str = Field(alias="schema", description="The `.pg` text in force there.")

    model_config = {"populate_by_name": True}


class SchemaChange(BaseModel):
    # Bounded by the body limit here, and by `MAX_SCHEMA_BYTES` in `apply_schema` (not
    # imported: `graphlake.schema` pulls in pyarrow, which the server loads lazily).
    schema_: str = Field(alias="schema", description="The new schema, as `.pg` text.")
    dry_run: bool = Field(False, description="Plan and check the rows; publish nothing.")
    allow_drop: bool = Field(
        False,
        description="Apply a plan that drops stored values "
        "(the plan's `dropped_values`); refused without it.",
    )
    message: str | None = Field(None, max_length=10_000)

    model_config = {"populate_by_name": True}


class SchemaStep(BaseModel):
    kind: str
    table: str
    cost: str = Field(description="metadata | column | check | rewrite")
    description: str


class SchemaPlanBody(BaseModel):
    branch: str
    base: str = Field(description="The head the plan was made on.")
    dry_run: bool
    cost: str = Field(description="The most expensive step's cost.")
    steps: list[SchemaStep]
    commit: str | None = Field(description="The published commit (null for a dry run).")
    dropped_values: dict[str, int] = Field(
        default_factory=dict,
        description="What the plan drops: `Table.prop` -> non-null values, `Table` -> rows "
        "(applying needs `allow_drop` when any is above 0).",
    )
    suggestions: list[str] = Field(
        default_factory=list,
        description="Likely renames: the `@renamed_from` that keeps a dropped property's values.",
    )


@router.get(
    "/branches/{branch:path}/schema",
    response_model=SchemaBody,
    dependencies=[ReadScope],
    responses=errors(*READ_ERRORS),
    summary="The schema (.pg text) in force at a branch or any revision",
)
def get_schema(branch: BranchPath, state: State) -> dict[str, Any]:
    commit = state.graph.resolve(branch)
    return {
        "revision": branch,
        "commit": commit.id,
        "schema": state.graph.repo.schemas.text(commit.schema_id),
    }


@router.post(
    "/branches/{branch:path}/schema",
    response_model=SchemaPlanBody,
    dependencies=[WriteScope],
    responses=errors(*WRITE_ERRORS),
    summary="Change the branch's schema as one commit (or plan it with dry_run)",
)
def apply_schema(branch: BranchPath, body: SchemaChange, state: State) -> dict[str, Any]:
    if not body.dry_run:  # a plan changes nothing, so it is allowed everywhere
        check_not_protected(state.config, branch, "a direct schema change")
    with state.locks.hold(branch):
        plan = state.graph.apply_schema(
            body.schema_,
            branch,
            message=body.message,
            dry_run=body.dry_run,
            allow_drop=body.allow_drop,
        )
    return plan.to_json()
