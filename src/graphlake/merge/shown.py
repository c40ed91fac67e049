"""Conflict rows as a merge reports them: float32 values as their shortest decimal.

A conflict's rows (`base`, `source`, `target`, merge_many's `rows`) hold the values the
merge compared, widened to Python floats (`0.10000000149011612` for a float32 `0.1`).
What a merge, revert or cherry-pick returns or raises (`MergeResult.conflicts` and
`.resolved`, `MergeConflictError.conflicts`) shows them by the rule reads use
(`read.floats.shortest_rows`), so Python, the CLI and HTTP JSON print `0.1`. Only the
report changes: the merge decided on the stored values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from graphlake.errors import GraphLakeError, MergeConflictError
from graphlake.merge.conflicts import Conflict

if TYPE_CHECKING:
    from graphlake.merge.result import MergeResult
    from graphlake.repo import Repo
    from graphlake.schema.model import Schema


def reported(
    repo: Repo, branch: str, revs: Sequence[str], run: Callable[[], MergeResult]
) -> MergeResult:
    """`run()` with the conflicts it returns or raises shown; their types are looked up
    in `branch`'s schema after the run, then in each of `revs`' schemas."""
    try:
        result = run()
    except MergeConflictError as exc:
        exc.conflicts = shown_conflicts(exc.conflicts, _schemas(repo, branch, revs))
        raise
    if result.conflicts or result.resolved:
        schemas = _schemas(repo, branch, revs)
        result.conflicts = shown_conflicts(result.conflicts, schemas)
        result.resolved = shown_conflicts(result.resolved, schemas)
    return result


def shown_conflicts(conflicts: Sequence[Conflict], schemas: Sequence[Schema]) -> list[Conflict]:
    # on first use only: loads pyarrow, numpy (start-up time)
    from graphlake.read.floats import shortest_rows

    types: dict[str, dict[str, Any]] = {}
    out = []
    for c in conflicts:
        if c.table not in types:
            types[c.table] = _types(schemas, c.table)
        ty = types[c.table]
        if not ty:
            out.append(c)
            continue
        base, source, target = shortest_rows([c.base, c.source, c.target], ty)
        rows = c.rows
        if rows is not None:
            rows = dict(zip(rows, shortest_rows(list(rows.values()), ty), strict=True))
        out.append(replace(c, base=base, source=source, target=target, rows=rows))
    return out


def _types(schemas: Sequence[Schema], table: str) -> dict[str, Any]:
    """Column name -> Arrow type of `table`, from the first schema that has each column."""
    # on first use only: loads pyarrow, lark, re2 (start-up time)
    from graphlake.schema.arrow import arrow_schema

    out: dict[str, Any] = {}
    for schema in schemas:
        t = schema.table(table)
        if t is not None:
            for f in arrow_schema(t):
                out.setdefault(f.name, f.type)
    return out


def _schemas(repo: Repo, branch: str, revs: Sequence[str]) -> list[Schema]:
    out = []
    for rev in (branch, *revs):
        try:
            out.append(repo.schemas.of(repo.resolve(rev)))
        except GraphLakeError:  # a revision gone meanwhile only shows less
            continue
    return out
