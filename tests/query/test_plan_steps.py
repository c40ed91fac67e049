"""Typed plan steps (query.steps): a step's kind is a field, never read out of its CTE's
name; planned without storage (a Schema object only)."""

from __future__ import annotations

import ast as pyast
from pathlib import Path

from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from graphlake.schema.parser import parse_schema
from tests.query.social import SCHEMA

SRC = Path(__file__).resolve().parents[2] / "src" / "graphlake"


def _plan(text: str, params: dict | None = None):
    return plan_query(parse_query(text), parse_schema(SCHEMA), dict(params or {}))


def test_step_kinds_are_fields():
    plan = _plan(
        "MATCH (a:Person {name: 'p01'})-[:Knows*1..2]->(b) WITH b MATCH "
        "p = shortestPath((b)-[:Follows*..3]->(c:Person {name: 'p02'})) RETURN b.name, c.name"
    )
    kinds = [s.kind for s in plan.steps]
    assert kinds[0] == "start" and kinds.count("walk") == 2
    assert all(k in ("start", "clause", "walk") for k in kinds)
    walks = [s for s in plan.steps if s.kind == "walk"]
    assert all("(" not in s.name for s in plan.steps)
    assert walks[0].key == () and walks[1].key == ("start", "node")  # a BFS keeps pairs once
    assert (
        walks[1]
        .definition()
        .startswith(
            f"{walks[1].name}(start, node, label, edges, nodes, depth) USING KEY (start, node) AS ("
        )
    )
    i = plan.steps.index(walks[0])
    assert plan.sql_until(i).endswith(f"SELECT count(*) AS n FROM {walks[0].name}")
    assert plan.sql_until(i + 1).endswith(") AS __c")  # a clause: count its rows
    answered = plan.with_step_sql(walks[1].name, "SELECT 1", "csr")
    step = answered.steps[plan.steps.index(walks[1])]
    assert (step.kind, step.sql, step.executor, step.key) == ("found", "SELECT 1", "csr", ())
    assert step.definition() == f"{step.name} AS (SELECT 1)"
    assert answered.steps[i] == walks[0]  # other walks untouched


def test_one_class_named_step_in_src():
    """The planner's steps are PlanStep and traverse's are RunStep: `Step` is the schema
    change's alone."""
    found = []
    for path in SRC.rglob("*.py"):
        for node in pyast.walk(pyast.parse(path.read_text())):
            if isinstance(node, pyast.ClassDef) and node.name == "Step":
                found.append(str(path.relative_to(SRC)))
    assert found == ["schema/changes.py"]
