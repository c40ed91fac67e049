"""The SQL planner lowers the logical plan (query.planner `lower`, `LOWERINGS`): each
clause's operators become its step, by the kind of the clause's first operator; a plan
edited by hand lowers to the SQL its operators say, not the query's text."""

from __future__ import annotations

import dataclasses

import pytest

from graphlake.query import logical, syntax
from graphlake.query.binder import bind
from graphlake.query.calls import completed
from graphlake.query.checker import Checker
from graphlake.query.parser import parse_query
from graphlake.query.patterns import patterns_of
from graphlake.query.planner import LOWERINGS, clause_ops, lower, plan_query
from tests.query import test_logical_plans as golden

SCHEMA, PARAMS = golden.SCHEMA, golden.PARAMS

# Every operator kind at least once (with the golden and comparison corpus)
EXTRA = [
    "MATCH (a:Person) OPTIONAL MATCH (a)-[:Knows]->(b) RETURN a.name, b.name",
    "MATCH (a:Person) MATCH (a)-[:Knows]->(b) RETURN b.name",
    "MATCH p = (a:Person)-[:Knows]->(b) RETURN length(p)",
    "MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..4]->(b:Person {name: $t})) "
    "RETURN length(p)",
    "UNWIND $names AS n WITH n, count(*) AS c WHERE c > 0 RETURN n ORDER BY n SKIP 1 LIMIT 2",
]
# Chains the anchoring rule reads from their end (their hops `backwards`)
BACKWARDS = [
    "MATCH (a:Person)-[:Knows*1..2]->(b:Person {name: $s}) RETURN a.name",
    "MATCH (c)-[:Follows]->(a)-[r:Knows {since: 3}]->(b:Person {name: $s}) RETURN c.name",
    "MATCH q = (a {age: 3})<-[:Knows*2..]-(:Person)-[:WorksAt]->(b:Company) "
    "WHERE b.name = $s RETURN length(q)",
    "MATCH (x:Person) OPTIONAL MATCH (x)-[:Knows]->()-[:Follows]-(b:Person {name: $t}) "
    "RETURN x.name, b.age",
]


def _plans():
    texts = [(t, s, p) for t, s, p in golden._corpus()]
    texts += [(t, SCHEMA, PARAMS) for t in EXTRA]
    for text, schema, params in texts:
        yield plan_query(parse_query(text), schema, dict(params)).logical


def test_every_operator_kind_has_exactly_one_lowering():
    """A clause's first operator picks its lowering (`LOWERINGS`: one per kind), which
    lowers the clause's other operators too, each of a kind it declares (`follows`): so
    every operator is lowered by exactly one lowering, its clause's. Every operator kind
    occurs, at the head of a clause or after one."""
    seen: set[type] = set()
    for plan in _plans():
        assert plan is not None
        for _, ops in clause_ops(plan):
            lowering = LOWERINGS[type(ops[0])]
            assert {type(op) for op in ops[1:]} <= lowering.follows, [o.line() for o in ops]
            for op in ops:
                seen.add(type(op))
                if isinstance(op, logical.OptionalJoin):
                    seen |= {type(o) for o in op.ops}
    kinds = set(_subclasses(logical.Op))
    assert seen == kinds, kinds ^ seen
    followers = set().union(*(lowering.follows for lowering in LOWERINGS.values()))
    assert set(LOWERINGS) | followers == kinds


def _subclasses(cls: type) -> list[type]:
    return [c for s in cls.__subclasses__() for c in (s, *_subclasses(s))]


def _bound(text: str):
    return bind(completed(parse_query(text)), SCHEMA, dict(PARAMS))


def _lowered(plan: logical.LogicalPlan, text: str) -> str:
    return lower(plan, _bound(text), SCHEMA, dict(PARAMS)).sql


def test_the_built_plan_lowers_to_the_planners_sql():
    text = "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC LIMIT 2"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    assert _lowered(plan, text) == plan_query(parse_query(text), SCHEMA, dict(PARAMS)).sql


def test_a_plan_edited_by_hand_lowers_to_its_operators():
    text = "UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC LIMIT 2"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    assert [type(op).__name__ for op in plan.ops] == ["Unwind", "Project", "Sort", "Limit"]
    unwind, project, _, limit = plan.ops
    assert isinstance(limit, logical.Limit) and isinstance(project, logical.Project)
    before = _lowered(plan, text)
    assert " ORDER BY " in before and before.endswith("LIMIT 2")

    # LIMIT 1, no ORDER BY, DISTINCT: the SQL follows the operators
    one = dataclasses.replace(limit.count, expr=syntax.Lit(limit.count.expr.pos, 1))
    edited = dataclasses.replace(
        plan,
        ops=(
            unwind,
            dataclasses.replace(project, distinct=True),
            dataclasses.replace(limit, count=one),
        ),
    )
    sql = _lowered(edited, text)
    assert sql.endswith("LIMIT 1") and " ORDER BY " not in sql
    same = "UNWIND [3, 1, 2] AS x RETURN DISTINCT x LIMIT 1"
    assert sql == plan_query(parse_query(same), SCHEMA, dict(PARAMS)).sql


def test_a_projection_lowers_from_its_operators():
    """An Aggregate's columns in its items' order, WITH's WHERE from its Filter."""
    text = "UNWIND [1, 2, 2] AS x WITH x, count(*) AS c WHERE c > 1 RETURN x, c"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    unwind, agg, where, final = plan.ops
    assert isinstance(agg, logical.Aggregate) and isinstance(where, logical.Filter)
    assert [a for a, _ in agg.keys] == ["x"] and [a for a, _ in agg.aggregates] == ["c"]
    swapped = dataclasses.replace(agg, items=agg.items[::-1])
    edited = dataclasses.replace(plan, ops=(unwind, swapped, final), clauses=(0, 1, 2))
    sql = _lowered(edited, text)
    same = "UNWIND [1, 2, 2] AS x WITH count(*) AS c, x RETURN x, c"
    assert sql == plan_query(parse_query(same), SCHEMA, dict(PARAMS)).sql
    assert _lowered(plan, text) == plan_query(parse_query(text), SCHEMA, dict(PARAMS)).sql


def test_a_plan_without_its_clauses_is_refused():
    text = "UNWIND [1] AS x RETURN x"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    with pytest.raises(ValueError, match="clauses"):
        _lowered(dataclasses.replace(plan, clauses=()), text)


# --- MATCH: its patterns read from its operators (patterns.patterns_of)


def _written(p: syntax.Pattern) -> syntax.Pattern:
    """A pattern without the positions of its property maps and of itself (which the
    operators do not carry: nothing compiles at them)."""

    def unplaced(m: syntax.MapLit | None) -> syntax.MapLit | None:
        return None if m is None else dataclasses.replace(m, pos=(0, 0))

    chain = p.chain
    nodes = tuple(dataclasses.replace(n, props=unplaced(n.props)) for n in chain.nodes)
    rels = tuple(dataclasses.replace(r, props=unplaced(r.props)) for r in chain.rels)
    return dataclasses.replace(p, pos=(0, 0), chain=syntax.Chain(nodes, rels))


def test_a_match_lowers_the_patterns_its_operators_say():
    """Every MATCH and OPTIONAL MATCH of the corpus: the patterns read from its operators
    are the ones written (each element where the binder placed it; chains read backwards
    turned back; shortestPath's ends; path names), so the pattern compiler sees them."""
    texts = [(t, s, p) for t, s, p in golden._corpus()]
    texts += [(t, SCHEMA, PARAMS) for t in EXTRA + BACKWARDS]
    matches = backwards = 0
    for text, schema, params in texts:
        query = completed(parse_query(text))
        plan = plan_query(query, schema, dict(params)).logical
        assert plan is not None
        for i, ops in clause_ops(plan):
            clause = query.clauses[i]
            if not isinstance(clause, syntax.Match):
                continue
            if clause.optional:
                (join,) = ops
                assert isinstance(join, logical.OptionalJoin)
                ops = join.ops
            got = [_written(p) for p in patterns_of(ops)]
            assert got == [_written(p) for p in clause.patterns], text
            matches += 1
            backwards += any(getattr(op, "backwards", False) for op in ops)
    assert matches > 500 and backwards >= 6, (matches, backwards)


def _match_sql(plan: logical.LogicalPlan, text: str) -> list[str]:
    return [s.sql for s in lower(plan, _bound(text), SCHEMA, dict(PARAMS)).steps]


def _planned(text: str) -> list[str]:
    return [s.sql for s in plan_query(parse_query(text), SCHEMA, dict(PARAMS)).steps]


def _edit(text: str, kind: type, **changes) -> logical.LogicalPlan:
    """The plan of `text` with its one operator of `kind` changed, executors chosen again."""
    checker = Checker(SCHEMA, dict(PARAMS))
    plan = logical.build(_bound(text), checker)
    (at,) = [j for j, op in enumerate(plan.ops) if isinstance(op, kind)]
    ops = list(plan.ops)
    ops[at] = dataclasses.replace(ops[at], **changes)
    return logical.choose_executors(dataclasses.replace(plan, ops=tuple(ops)), checker)


def _since(value: int) -> syntax.Expr:
    """`r.since = value`, as an inline map entry's Filter (at its place in the text)."""
    pos = (1, 35)
    return syntax.Binary(
        pos, "=", syntax.Prop(pos, syntax.Var(pos, "r"), "since"), syntax.Lit(pos, value)
    )


@pytest.mark.parametrize(
    ("text", "kind", "changes", "same"),
    [
        # an Expand's direction and types
        (
            "MATCH (a:Person)-[:Knows]->(b:Person) RETURN a.name, b.name",
            logical.Expand,
            {"direction": "in", "types": ("Follows",)},
            "MATCH (a:Person)<-[:Follows]-(b:Person) RETURN a.name, b.name",
        ),
        # a relationship's inline Filter
        (
            "MATCH (a:Person)-[r:Knows {since: 3}]->(b) RETURN b.name",
            logical.Filter,
            {"condition": logical.Typed(_since(5), "bool")},
            "MATCH (a:Person)-[r:Knows {since: 5}]->(b) RETURN b.name",
        ),
        # a VarExpand's bounds
        (
            "MATCH (a:Person {name: $s})-[:Knows*1..2]->(b) RETURN DISTINCT b.name",
            logical.VarExpand,
            {"low": 2, "high": 3},
            "MATCH (a:Person {name: $s})-[:Knows*2..3]->(b) RETURN DISTINCT b.name",
        ),
        # a Lookup's value
        (
            "MATCH (a:Person {name: 'p01'})-[:Knows]->(b) RETURN b.name",
            logical.Lookup,
            {"value": logical.Typed(syntax.Lit((1, 24), "p02"), "string", ("inline", (1, 7), 0))},
            "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name",
        ),
        # a ShortestPath's bounds
        (
            "MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..4]->(b:Person {name: $t})) "
            "RETURN length(p)",
            logical.ShortestPath,
            {"high": 2, "hops": (1, 2)},
            "MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..2]->(b:Person {name: $t})) "
            "RETURN length(p)",
        ),
    ],
)
def test_a_match_plan_edited_by_hand_lowers_to_its_operators(text, kind, changes, same):
    edited = _edit(text, kind, **changes)
    assert _match_sql(edited, text) == _planned(same)
    assert _match_sql(edited, text) != _planned(text)


def test_a_backwards_chain_lowers_as_written():
    """The anchoring rule reads `(a)-[:Knows]->(b {name: $s})` from b; turned back, the
    lowering compiles the pattern as written (its walk starts at b by the pattern
    compiler's own rule), and a plan whose hop is not backwards reads the reverse pattern."""
    text = "MATCH (a:Person)-[:Knows]->(b:Person {name: $s}) RETURN a.name"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    (hop,) = [op for op in plan.ops if isinstance(op, logical.Expand)]
    assert hop.backwards and hop.direction == "in"
    assert _match_sql(plan, text) == _planned(text)
    forwards = _edit(text, logical.Expand, backwards=False)
    reverse = "MATCH (b:Person {name: $s})<-[:Knows]-(a:Person) RETURN a.name"
    assert _match_sql(forwards, text) == _planned(reverse)


def test_an_optional_match_lowers_from_its_operators():
    text = "MATCH (a:Person) OPTIONAL MATCH (a)-[:Knows]->(b) RETURN a.name, b.name"
    plan = logical.build(_bound(text), Checker(SCHEMA, dict(PARAMS)))
    join = plan.ops[1]
    assert isinstance(join, logical.OptionalJoin)
    arg, hop = join.ops
    assert isinstance(hop, logical.Expand)
    edited_join = dataclasses.replace(join, ops=(arg, dataclasses.replace(hop, direction="in")))
    ops = (plan.ops[0], edited_join, *plan.ops[2:])
    sql = _match_sql(dataclasses.replace(plan, ops=ops), text)
    assert sql == _planned(
        "MATCH (a:Person) OPTIONAL MATCH (a)<-[:Knows]-(b) RETURN a.name, b.name"
    )
