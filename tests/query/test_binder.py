"""The binder (query.binder): scopes clause by clause, node types of patterns, the type of
every expression by its place, and the typed errors with their positions; from a Schema
object alone (no storage)."""

from __future__ import annotations

import pytest

from graphlake.errors import (
    CypherError,
    CypherNameError,
    CypherParameterError,
    CypherProcedureError,
    CypherTypeError,
)
from graphlake.query import binder, logical
from graphlake.query.binder import BoundQuery, bind, node_at
from graphlake.query.checker import Binding
from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from graphlake.schema.parser import parse_schema
from tests.query import social

SCHEMA = parse_schema(social.SCHEMA)
PARAMS = {"s": "p01", "age": 30, "names": ["p01", "p02"], "re": "p0.*", "n": 2}


def _bind(text: str, params: dict | None = None) -> BoundQuery:
    return bind(parse_query(text), SCHEMA, PARAMS if params is None else params)


def _scope(b: BoundQuery, clause: int) -> dict[str, tuple]:
    return {k: (v.kind, v.types) for k, v in b.scopes[clause].items()}


def test_scopes_clause_by_clause():
    b = _bind(
        "MATCH (a:Person)-[r:Knows]->(b) OPTIONAL MATCH (b)-[:WorksAt]->(c) "
        "WITH a, count(c) AS n UNWIND [1, 2] AS x RETURN a.name, n, x"
    )
    assert _scope(b, 0) == {
        "a": ("node", ("Person",)),
        "b": ("node", ("Person",)),  # narrowed by Knows' end type
        "r": ("relationship", ("Knows",)),
    }
    assert list(b.scopes[0]) == ["a", "b", "r"]  # the order the SQL carries them in
    assert _scope(b, 1)["c"] == ("node", ("Company",))
    assert _scope(b, 2) == {"a": ("node", ("Person",)), "n": ("integer", ())}  # WITH narrows
    assert _scope(b, 3)["x"] == ("integer", ())  # a literal list's items
    assert _scope(b, 4) == {"a.name": ("string", ()), "n": ("integer", ()), "x": ("integer", ())}
    assert dict(b.scope_before(0)) == {} and b.scope_before(3) == b.scopes[2]


def test_call_yield_and_paths_add_variables():
    b = _bind(
        "CALL pagerank('Knows') YIELD node AS p, rank "
        "MATCH q = (p)-[k:Knows*1..2]->(f) RETURN p.name, rank, length(q), size(k)"
    )
    assert _scope(b, 0) == {"p": ("node", ("Person",)), "rank": ("float", ())}
    assert _scope(b, 1)["q"] == ("path", ())
    assert _scope(b, 1)["k"] == ("relationship list", ("Knows",))
    assert b.calls[0].algo.name == "pagerank" and b.calls[0].edge.name == "Knows"
    assert [b.type_at((2, "items", j)) for j in range(4)] == [
        "string",
        "float",
        "integer",
        "integer",
    ]


def test_node_types_of_patterns_by_element():
    b = _bind("MATCH (a)-[:WorksAt]->(c), (c)<-[:WorksAt]-(d) RETURN a, d")
    types = b.node_types[(0,)]
    assert types[node_at(0, 0)] == ("Person",) and types[node_at(0, 1)] == ("Company",)
    assert types[node_at(1, 1)] == ("Person",)


def test_expression_types_by_place():
    b = _bind(
        "MATCH (a:Person) WHERE a.age > $age AND a.name =~ $re RETURN a.age / 2 AS h, "
        "a.score / 2 AS f, a.name + 1 AS s, [1] + [2] AS l, a.born.year AS y, count(*) AS c, "
        "avg(a.age) AS m, CASE WHEN a.age > 3 THEN 'x' ELSE 'y' END AS k, coalesce(a.age, 1) AS z"
    )
    assert [b.type_at((1, "items", j)) for j in range(9)] == [
        "integer",  # integers divide to an integer
        "float",
        "string",
        "list",
        "integer",
        "integer",
        "float",
        "string",
        "integer",
    ]
    assert b.type_at((1, "items", 0, "left")) == "integer"
    assert b.type_at((1, "items", 0, "left", "subject")) == "node"
    assert b.type_at((0, "where")) == "boolean"
    assert b.type_at((0, "where", "left", "right")) == "integer"  # $age
    assert b.inlined == {"re"}  # a regex is checked by its value: the plan depends on it


def test_subqueries_see_the_scope_around_them():
    b = _bind(
        "MATCH (a:Person) WHERE EXISTS { (a)-[:Knows]->(b) WHERE b.age > a.age } RETURN a.name"
    )
    assert set(b.subquery_scopes[(0, "where")]) == {"a"}
    assert b.node_types[(0, "where")][node_at(0, 1)] == ("Person",)
    assert b.type_at((0, "where", "where")) == "boolean"
    assert "b" not in b.scopes[0]  # the subquery's own variables stay inside it


def test_the_result_is_immutable():
    b = _bind("UNWIND $names AS x RETURN x")
    with pytest.raises(TypeError):
        b.types[(0, "expr")] = "string"  # type: ignore[index]
    with pytest.raises(TypeError):
        b.scopes[0]["y"] = Binding(None)  # type: ignore[index]
    assert b.inlined == {"names"}  # UNWIND's item type read the list's value


def test_an_order_key_that_repeats_a_projected_expression_sorts_by_its_column():
    b = _bind("MATCH (a:Person)-[:WorksAt]->(c) RETURN c.name, count(*) ORDER BY c.name")
    assert b.type_at((1, "order", 0)) == "string"  # `c` is gone after the grouping
    text = "MATCH (a:Person)-[:WorksAt]->(c) RETURN c.name, count(*) ORDER BY c.city"
    assert isinstance(_bind(text).failed[(1, "order", 0)], CypherNameError)  # for the planner
    with pytest.raises(CypherNameError, match="variable 'c' is not defined") as e:
        plan_query(parse_query(text), SCHEMA, {})  # no projected column repeats it
    assert (e.value.line, e.value.column) == (1, 67)
    # a repeat is told by its SQL: upper() is toUpper()'s SQL, lower() is not
    text = "MATCH (a:Person) RETURN toUpper(a.name), count(*) ORDER BY {}(a.name)"
    plan = plan_query(parse_query(text.format("upper")), SCHEMA, {})
    assert plan.sql.endswith('ORDER BY "toUpper(a.name)" ASC NULLS LAST')
    with pytest.raises(CypherNameError, match="variable 'a' is not defined"):
        plan_query(parse_query(text.format("lower")), SCHEMA, {})


def test_the_logical_plan_and_the_sql_agree_on_types():
    plan = plan_query(parse_query("UNWIND [1, 2, 3] AS x RETURN x / 2 AS h"), SCHEMA, {})
    assert plan.logical is not None
    project = plan.logical.ops[-1]
    assert isinstance(project, logical.Project)
    assert project.items[0][1].type == "integer"
    assert '("x" // 2::BIGINT)' in plan.sql


def test_the_sql_generator_has_no_type_rules():
    """query.expr writes SQL for bound types only: it raises no Cypher error."""
    import inspect

    from graphlake.query import expr

    source = inspect.getsource(expr)
    assert "graphlake.errors" not in source and "raise Cypher" not in source
    assert binder.contains_aggregate is expr.contains_aggregate


ERRORS = [
    # (query, error, message part, line, column)
    ("MATCH (a:Person) RETURN aa.name", CypherNameError, "did you mean 'a'", 1, 25),
    ("MATCH (a:Person) RETURN a.nme", CypherNameError, "no property 'nme'", 1, 25),
    ("MATCH (a:Persn) RETURN a", CypherNameError, "did you mean 'Person'", 1, 7),
    ("MATCH (a:Person) WHERE a.name = 1 RETURN a", CypherTypeError, "cannot compare", 1, 24),
    ("MATCH (a:Person) RETURN a.name - 1", CypherTypeError, "'-' needs", 1, 25),
    ("MATCH (a:Person) WHERE a.age RETURN a", CypherTypeError, "a condition needs", 1, 24),
    ("MATCH (a:Person) WHERE count(a) > 1 RETURN a", CypherError, "only allowed in WITH", 1, 24),
    ("MATCH (a:Person) RETURN sum(a.name)", CypherTypeError, "sum() needs", 1, 29),
    ("MATCH (a:Person) RETURN touper(a.name)", CypherNameError, "did you mean 'toupper'", 1, 25),
    ("MATCH (a:Person) RETURN a.born.week", CypherTypeError, "a date has no property", 1, 25),
    ("MATCH (a:Person) RETURN a.name =~ 'p('", CypherError, "invalid regex", 1, 35),
    ("UNWIND 5 AS x RETURN x", CypherTypeError, "UNWIND needs a list", 1, 8),
    ("UNWIND [1] AS x UNWIND [2] AS x RETURN x", CypherError, "already defined", 1, 17),
    ("MATCH (a:Person) RETURN a LIMIT 1 RETURN a", CypherError, "RETURN must be the last", 1, 18),
    ("MATCH (a:Person) WITH a", CypherError, "must end with RETURN", 1, 18),
    ("RETURN 1 AS x LIMIT -1", CypherError, "LIMIT needs a non-negative", 1, 21),
    ("RETURN 1 AS x LIMIT $s", CypherParameterError, "got 'p01'", 1, 21),
    ("MATCH (a:Person) RETURN $nosuch", CypherParameterError, "$nosuch is missing", 1, 25),
    ("MATCH (a:Person) WITH a.name RETURN 1", CypherError, "needs a name", 1, 23),
    ("MATCH (a:Person)-[a:Knows]->(b) RETURN a", CypherError, "already bound", 1, 17),
    ("MATCH p = (a:Person)-->(b), p = (b)-->(c) RETURN a", CypherError, "already defined", 1, 29),
    ("MATCH (a:Person)-[:Knows*1..20]->(b) RETURN a", CypherError, "at most 10 hops", 1, 17),
    ("MATCH (a:Person) WHERE (a)-[:Knows*1..2]->() RETURN a", CypherError, "not supported", 1, 27),
    (
        "MATCH p = shortestPath((a:Person)-[:Knows*..3]->(b:Person)) RETURN p",
        CypherError,
        "needs both end nodes",
        1,
        7,
    ),
    ("CALL nosuch('Knows') YIELD node RETURN node", CypherProcedureError, "unknown", 1, 1),
    ("MATCH (:Person {nme: 1}) RETURN 1", CypherNameError, "an anonymous node (Person)", 1, 22),
    ("MATCH (a:Person {name: (a)-->()}) RETURN a", CypherError, "not allowed here", 1, 24),
]


@pytest.mark.parametrize(("text", "error", "words", "line", "column"), ERRORS)
def test_errors_name_the_place(text, error, words, line, column):
    with pytest.raises(error) as e:
        _bind(text)
    assert words in str(e.value)
    assert (e.value.line, e.value.column) == (line, column)
    with pytest.raises(error) as planned:  # the planner raises the binder's error
        plan_query(parse_query(text), SCHEMA, dict(PARAMS))
    assert str(planned.value) == str(e.value)


def test_internal_aliases_never_show_in_errors():
    with pytest.raises(CypherNameError) as e:
        _bind("MATCH (:Person {name: x}) RETURN 1")
    assert str(e.value).endswith("variable 'x' is not defined")  # no `(known: __n1)`


def test_a_cached_plan_is_bound_once(monkeypatch):
    from graphlake.query import plancache, planner

    binds = []

    def counted(*args):
        binds.append(args[0])
        return bind(*args)

    monkeypatch.setattr(planner, "bind", counted)
    cache = plancache.PlanCache()
    q = "MATCH (a:Person {name: $s}) WHERE a.name =~ $re RETURN a.age"

    def get(params):
        return cache.plan(q, "s1", params, lambda: plan_query(parse_query(q), SCHEMA, params))

    get({"s": "p01", "re": "p.*"})
    plan = get({"s": "p02", "re": "p.*"})  # another value of a prepared parameter
    assert len(binds) == 1 and plan.arguments == {"s": "p02", "re": "p.*"}
    get({"s": "p02", "re": "q.*"})  # the binder read the regex: bound again
    assert len(binds) == 2 and cache.hits == 1
