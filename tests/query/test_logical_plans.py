"""Golden logical plans (query.logical): typed operators with the executor the rules
chose, from a Schema object alone (no storage); the planner runs what the executor rule
marked (the traversal is built from the operators it put on the adjacency, path searches
where it says) on every query of the LadybugDB comparison and the traversal tests; each
condition of the adjacency's rule with a query just inside and just outside it."""

from __future__ import annotations

import datetime as dt

import pytest

from graphlake.errors import CypherError
from graphlake.query import logical
from graphlake.query.checker import Checker
from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from graphlake.schema.parser import parse_schema
from tests.query import queries, social
from tests.query import test_traverse as traversals

SCHEMA = parse_schema(social.SCHEMA)
PARAMS = {"s": "p01", "t": "p07", "age": 30, "n": 3, "names": ["p01", "p02"], "re": "p0.*"}


def _logical(text: str, schema=SCHEMA, params=PARAMS) -> logical.LogicalPlan:
    plan = plan_query(parse_query(text), schema, dict(params))
    assert plan.logical is not None
    return plan.logical


# (query, the plan top-down: each operator with its executor)
GOLDEN = [
    (
        "CALL pagerank('Knows', {damping: 0.9}) YIELD node AS p, rank WHERE rank > 0.01 "
        "RETURN p.name, rank ORDER BY rank DESC",
        """\
Sort rank DESC  [sql]
Project p.name, rank  [sql]
Filter rank > 0.01  [sql]
ProcedureCall pagerank() YIELD p, rank  [algo]
""",
    ),
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name",
        """\
Project b.name  [csr]
Expand (a)-[:Knows]->(b)  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (a:Person {name: $s})-[:Knows]->()-[:Knows]->(c) WHERE c.age > 30 RETURN count(c)",
        """\
Aggregate by (): count(c)  [csr]
Filter c.age > 30  [csr]
Expand ()-[:Knows]->(c)  [csr]
Expand (a)-[:Knows]->()  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (a:Person)-[:Follows*1..3]->(b) RETURN count(*), count(DISTINCT b)",
        """\
Aggregate by (): count(*), count(DISTINCT b)  [csr]
VarExpand (a)-[:Follows*1..3]->(b)  [csr]
NodeScan (a:Person)  [csr]
""",
    ),
    (
        "MATCH (b)-[:Follows]->(c)-[:Follows]->(a:Person {name: $s}) RETURN b.name, c.name",
        """\
Project b.name, c.name  [csr]
Expand (c)<-[:Follows]-(b)  [csr]
Expand (a)<-[:Follows]-(c)  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (a:Person)-[:Knows]->(b) WHERE a.name = $s AND b.age <> 10 RETURN b.age",
        """\
Project b.age  [csr]
Filter b.age <> 10  [csr]
Expand (a)-[:Knows]->(b)  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (a:Person {name: $s})-[r:Knows]->(b) RETURN b.name, r.since",
        """\
Project b.name, r.since  [csr]
Expand (a)-[r:Knows]->(b)  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b)"
        " RETURN b.name AS n ORDER BY n DESC SKIP 1 LIMIT $n",
        """\
Limit $n  [sql]
Skip 1  [sql]
Sort n DESC  [sql]
Project b.name AS n  [sql]
Expand (a)-[:Knows]->(b)  [csr]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "MATCH (p:Person)-[:WorksAt]->(c:Company) WITH c, count(*) AS staff WHERE staff > 1"
        " RETURN c.name, staff ORDER BY staff DESC",
        """\
Sort staff DESC  [sql]
Project c.name, staff  [sql]
Filter staff > 1  [sql]
Aggregate by c: count(*) AS staff  [sql]
Expand (p)-[:WorksAt]->(c:Company)  [csr]
NodeScan (p:Person)  [csr]
""",
    ),
    (
        "MATCH (a:Person {name: $s}) OPTIONAL MATCH (a)-[:WorksAt]->(c) RETURN a.name, c.name",
        """\
Project a.name, c.name  [sql]
OptionalJoin  [sql]
| Expand (a)-[:WorksAt]->(c)  [sql]
| Argument (a)  [sql]
Lookup (a:Person) by name = $s  [csr]
""",
    ),
    (
        "UNWIND $names AS x MATCH (p:Person {name: x}) RETURN p.name, p.age",
        """\
Project p.name, p.age  [sql]
Filter p.name = x  [sql]
NodeScan (p:Person)  [sql]
Unwind $names AS x  [sql]
""",
    ),
    (
        "MATCH p = shortestPath((a:Person {name: $s})-[:Follows*..6]->(b:Person {name: $t}))"
        " RETURN length(p)",
        """\
Project length(p)  [sql]
ShortestPath p = (a)-[:Follows*1..6]->(b)  [pathsearch]
Lookup (b:Person) by name = $t  [lance]
Lookup (a:Person) by name = $s  [lance]
""",
    ),
    (  # an end selected by a WHERE condition: its seed is a SQL statement
        "MATCH p = shortestPath((a:Person {name: $s, age: 30})-[:Follows*..6]->(b:Person))"
        " WHERE b.name = $t RETURN length(p)",
        """\
Project length(p)  [sql]
ShortestPath p = (a)-[:Follows*1..6]->(b)  [pathsearch]
Lookup (b:Person) by name = $t  [sql]
Filter a.age = 30  [lance]
Filter a.name = $s  [lance]
NodeScan (a:Person)  [lance]
""",
    ),
    (
        "MATCH (a:Person {name: $s}), (b:Person {name: $t}) MATCH p ="
        " shortestPath((a)-[:Knows*..4]-(b)) RETURN nodes(p)",
        """\
Project nodes(p)  [sql]
ShortestPath p = (a)-[:Knows*1..4]-(b)  [sql]
Argument (b)  [sql]
Argument (a)  [sql]
Lookup (b:Person) by name = $t  [sql]
Lookup (a:Person) by name = $s  [sql]
""",
    ),
    (
        "MATCH (a:Person)-[:Knows]->(b:Person) WHERE a.age < b.age AND b.city = 'Oslo'"
        " RETURN DISTINCT a.city",
        """\
Project DISTINCT a.city  [sql]
Filter b.city = 'Oslo'  [sql]
Filter a.age < b.age  [sql]
Expand (a)-[:Knows]->(b:Person)  [csr]
NodeScan (a:Person)  [csr]
""",
    ),
    (
        "MATCH (a:Person) WHERE EXISTS { (a)-[:WorksAt]->(:Company {city: 'Rome'}) } RETURN a.name",
        """\
Project a.name  [sql]
Filter EXISTS { (a)-[:WorksAt]->(:Company {...}) }  [sql]
NodeScan (a:Person)  [sql]
""",
    ),
    (
        "MATCH (a:Person) WHERE (a)-[:Follows]->() AND a.name =~ $re RETURN a.name, a.score",
        """\
Project a.name, a.score  [sql]
Filter (a)-[:Follows]->()  [sql]
Filter a.name =~ $re  [sql]
NodeScan (a:Person)  [sql]
""",
    ),
    (
        "MATCH (a:Person {city: 'Oslo', age: $age})-[:Knows*0..2]-(b) RETURN count(b)",
        """\
Aggregate by (): count(b)  [csr]
VarExpand (a)-[:Knows*0..2]-(b)  [csr]
Filter a.age = $age  [csr]
Filter a.city = 'Oslo'  [csr]
NodeScan (a:Person)  [csr]
""",
    ),
    (
        "MATCH (n) RETURN count(n)",
        """\
Aggregate by (): count(n)  [sql]
NodeScan (n)  [sql]
""",
    ),
    (
        "MATCH (a:Person)-[:Knows]->(b)-[:Knows]->(a) RETURN a.name, b.name",
        """\
Project a.name, b.name  [sql]
Expand into (b)-[:Knows]->(a)  [sql]
Expand (a)-[:Knows]->(b)  [sql]
NodeScan (a:Person)  [sql]
""",
    ),
    (
        "MATCH path = (a:Person {name: $s})-[:Follows]->(b) RETURN length(path)",
        """\
Project length(path)  [sql]
NamePath path = (a:Person {...})-[:Follows]->(b)  [sql]
Expand (a)-[:Follows]->(b)  [sql]
Lookup (a:Person) by name = $s  [sql]
""",
    ),
    (
        "MATCH (c:Company)<-[w:WorksAt {role: 'eng'}]-(p) RETURN c.name, collect(p.name) AS people",
        """\
Aggregate by c.name: collect(p.name) AS people  [sql]
Filter w.role = 'eng'  [sql]
Expand (c)<-[w:WorksAt]-(p)  [sql]
NodeScan (c:Company)  [sql]
""",
    ),
    (
        "WITH 1 AS one RETURN one + $age AS x, CASE WHEN $age > 10 THEN 'old' ELSE null END AS y",
        """\
Project one + $age AS x, CASE WHEN $age > 10 THEN 'old' ELSE null END AS y  [sql]
Project 1 AS one  [sql]
""",
    ),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN, ids=[t for t, _ in GOLDEN])
def test_golden_plans(text, expected):
    assert _logical(text).text() + "\n" == expected


def test_expressions_are_typed():
    plan = _logical(
        "MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.age > 3 "
        "RETURN b.name AS n, b.score * 2 AS s, count(*) AS c"
    )
    ops = {type(op).__name__: op for op in plan.ops}
    assert ops["Lookup"].value.type == "string"
    assert ops["Filter"].condition.type == "boolean"
    agg = ops["Aggregate"]
    assert [(a, t.type) for a, t in agg.keys] == [("n", "string"), ("s", "float")]
    assert [(a, t.type) for a, t in agg.aggregates] == [("c", "integer")]


def test_the_builder_does_not_change_the_planners_checker():
    from graphlake.query.binder import bind  # (bench/compiler_corpus.py imports this module)

    checker = Checker(SCHEMA, dict(PARAMS))
    text = "MATCH (a:Person {name: $s}) WHERE a.age > $age RETURN a.name"
    logical.build(bind(parse_query(text), SCHEMA, PARAMS), checker)
    assert checker.bound == {} and checker.inlined == set()


def _corpus():
    out = [(q, SCHEMA, queries.PARAMS) for q, _ in queries.HAND]
    out += [(q, SCHEMA, queries.PARAMS) for q, _ in queries.generated(210)]
    out += [(q, SCHEMA, queries.PARAMS) for q, _ in queries.grouped(60)]
    out += [(q, SCHEMA, queries.PARAMS) for q, _ in queries.anchored(60)]
    t = parse_schema(traversals.SCHEMA)
    out += [(q, t, {"s": "n01"}) for q in traversals.QUERIES + traversals.UNANCHORED]
    out += [(text, SCHEMA, PARAMS) for text, _ in GOLDEN]
    out += [(text, SCHEMA, {**PARAMS, "none": None}) for text in SHORTEST]
    return out


# shortestPath ends selected in every way the planner's seeds tell apart
SHORTEST = [
    f"{match} p = shortestPath(({a})-[{rel}*..5]-{arrow}({b})){where} RETURN length(p)"
    for match, a, b, rel, arrow, where in [
        ("MATCH", "a:Person {name: $s}", "b:Person {name: 'p03'}", ":Follows", ">", ""),
        ("MATCH", "a {name: $s}", "b {name: $t, age: $age}", ":Knows", "", ""),
        ("MATCH", ":Person {name: $s}", ":Person {age: 3}", ":Follows", ">", ""),
        ("MATCH", "a:Person {name: $s}", "b:Person", ":Follows", ">", " WHERE b.age > 3"),
        ("MATCH", "a:Person {name: $s}", "b:Person {name: $t}", ":Follows", ">", " WHERE a.age>3"),
        ("MATCH", "a:Person {name: $none}", "b:Person {name: $t}", ":Follows", ">", ""),
        ("MATCH", "a:Person {name: $names[0]}", "b:Person {name: $t}", ":Follows", ">", ""),
        ("MATCH", "a:Person|Company {name: $s}", "b {name: $t}", ":Knows", "", ""),
        ("MATCH", "a:Person {name: $s}", "b:Company {name: $t}", ":WorksAt", ">", ""),
        ("MATCH", "a:Person {name: $s}", "b:Person {name: $t}", ":Follows|Knows", ">", ""),
        ("OPTIONAL MATCH", "a:Person {name: $s}", "b:Person {name: $t}", ":Knows", ">", ""),
    ]
]


def _runs(plan) -> str:
    """Where the planner runs a query: wholly on the adjacency ("csr"), its first MATCH
    there and the rest in DuckDB ("match"), or neither ("sql")."""
    if plan.traversal is not None:
        return "csr"
    return "match" if plan.csr_match is not None else "sql"


def test_what_runs_is_what_the_rule_marked():
    """The planner builds a traversal exactly when the executor rule marked the whole
    plan "csr", a first MATCH's exactly when it marked the first clause's chain (and
    nothing else); pathsearch exactly when the planner prepared a path search; lance
    exactly on the ends whose path search seeds are Lance lookups (so explain's logical
    plan is what runs). On the corpus, the same queries run on the adjacency as when
    query.traverse recognized them itself (issue 28: 132 wholly, 202 first MATCHes),
    and the two unanchored chains starting at an inline map (test_traverse.UNANCHORED's
    last two), whose MATCH alone ran there then, now wholly."""
    counts = {"csr": 0, "match": 0, "sql": 0, "pathsearch": 0, "lance": 0}
    for text, schema, params in _corpus():
        try:
            plan = plan_query(parse_query(text), schema, dict(params))
        except CypherError:
            continue
        rule = plan.logical
        assert rule is not None
        runs = _runs(plan)
        counts[runs] += 1
        assert (runs == "csr") == (rule.executors == {"csr"}), text
        first = logical.first_clause(rule)
        marked = [op for op in first if not isinstance(op, logical.Filter)]
        if runs == "match":
            assert all(op.executor == "csr" for op in marked), text
            assert {op.executor for op in first if isinstance(op, logical.Filter)} <= {"sql"}
            assert "csr" not in {op.executor for op in rule.ops[len(first) :]}, text
            assert len(plan.csr_match.traversal.hops) == len(marked) - 1, text
        elif runs == "sql":
            assert "csr" not in rule.executors, text
        assert ("pathsearch" in rule.executors) == bool(plan.searches), text
        assert _lance_ends(rule.ops) == _lookup_seeds(plan), text
        counts["pathsearch"] += "pathsearch" in rule.executors
        counts["lance"] += "lance" in rule.executors
    assert counts["csr"] == 134 and counts["match"] == 202, counts
    assert counts["pathsearch"] >= 3 and counts["sql"] >= 140 and counts["lance"] >= 2


BOUNDS = parse_schema(
    "node Doc { name: String @key  v: Vector(3)?  n: I64? }\n"
    "node Num { k: I64 @key  n: I64? }\n"
    "edge Links: Doc -> Doc\nedge Counts: Num -> Num"
)

# Each condition of the executor rule (query.logical.read_chain, _on_adjacency) with a
# query just inside it and one just outside: where it runs.
BOUNDARIES = [
    # the start: a Lookup by a String key, a NodeScan of one label, or of none when the
    # first relationship's edge type starts at one node type
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Person)-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Person|Company)-[:WorksAt]->(b) RETURN b.name", "sql"),
    ("MATCH (a)-[:WorksAt]->(b) RETURN b.name", "csr"),
    ("MATCH (a)-[:Knows]-(b) RETURN b.name", "csr"),
    ("MATCH (a)-[:WorksAt]-(b) RETURN b.name", "sql"),
    ("MATCH (a {age: 3})-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (:Person {age: 3})-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Num {k: $k})-[:Counts]->(b) RETURN b.n", "csr"),  # a NodeScan, filtered
    # a string anchor; `= null` is a comparison, and alone needs a hop
    ("MATCH (a:Person {name: $none})-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s}) RETURN a.name", "match"),
    ("MATCH (a:Person {name: $none}) RETURN a.name", "sql"),
    ("MATCH (a:Person) RETURN a.name", "sql"),
    # hops: one edge type, reaching the next node's type, to a new variable
    ("MATCH (c:Company {name: $s})<-[:WorksAt]-(b) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows|Follows]->(b) RETURN b.name", "sql"),
    ("MATCH (a:Person {name: $s})-[]->(b) RETURN b.name", "sql"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b:Person) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b)-[:Knows]->(a) RETURN b.name", "sql"),
    ("MATCH (a:Person {name: $s})-[:Knows {since: 2001}]->(b) RETURN b.name", "sql"),
    # walks: over an edge type joining one node type to itself; a variable on one: bound
    ("MATCH (a:Person {name: $s})-[:Follows*1..3]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:WorksAt*1..2]->(b) RETURN b.name", "sql"),
    ("MATCH (a:Person {name: $s})-[r:Follows]->(b) RETURN b.name, r.level", "csr"),
    ("MATCH (a:Person {name: $s})-[r:Follows*1..2]->(b) RETURN b.name", "match"),
    # filters: a node property compared with a constant (else the first MATCH alone)
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE 3 < b.age RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.age > -3 RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.city = $s RETURN b.name", "csr"),
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.age > 3 OR b.age < 1 RETURN b.name",
        "match",
    ),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.age > a.age RETURN b.name", "match"),
    ("MATCH (a:Person {name: $s})-[r:Knows]->(b) WHERE r.since > 2000 RETURN b.name", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.name IN $names RETURN b.name", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WHERE b.born > $d RETURN b.name", "match"),
    # an inline map is applied on the adjacency: all of it, or the MATCH is SQL
    ("MATCH (a:Person {name: $s})-[:Knows]->(b {age: $age}) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b {born: $d}) RETURN b.name", "sql"),
    # the RETURN: node or fixed relationship properties, or counts alone
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN count(b), count(DISTINCT b)", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name, count(*)", "match"),
    ("MATCH (a:Person {name: $s})-[r:Knows]->(b) RETURN count(r)", "csr"),
    ("MATCH (a:Person {name: $s})-[r:Knows]->(b) RETURN count(DISTINCT r)", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name", "csr"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.born", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN DISTINCT b.name", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name LIMIT 2", "match"),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b) WITH b RETURN b.name", "match"),
    # the first MATCH: one chain, its variables' values carried to SQL
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) MATCH (c:Person {name: $t}) RETURN c.name",
        "match",
    ),
    ("MATCH (a:Person {name: $s})-[:Knows]->(b), (c:Person {name: $t}) RETURN c.name", "sql"),
    ("MATCH p = (a:Person {name: $s})-[:Knows]->(b) RETURN b.name", "sql"),
    ("OPTIONAL MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name", "sql"),
    ("UNWIND [1] AS x MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name", "sql"),
    ("MATCH (a:Doc {name: $s})-[:Links]->(b) RETURN b.name ORDER BY b.name", "match"),
    ("MATCH (a:Doc {name: $s})-[:Links]->(b) RETURN b ORDER BY b.name", "sql"),  # a vector
]


@pytest.mark.parametrize(("text", "expected"), BOUNDARIES, ids=[t for t, _ in BOUNDARIES])
def test_the_executor_rules_boundaries(text, expected):
    schema = BOUNDS if "Doc" in text or "Num" in text else SCHEMA
    params = {**PARAMS, "none": None, "d": dt.date(1990, 1, 1), "k": 3}
    assert _runs(plan_query(parse_query(text), schema, params)) == expected


def test_a_key_among_other_conditions_anchors_the_chain():
    """anchoring: the one key comparison on a node is its Lookup, whatever else WHERE
    says of it, at either end of the chain; the traversal starts there."""
    for text, anchor in [
        ("MATCH (a:Person)-[:Knows]->(b) WHERE a.name = $s AND a.age > 3 RETURN b.name", "a"),
        ("MATCH (a:Person)-[:Knows]->(b:Person {name: $s}) WHERE b.age > 3 RETURN a.name", "b"),
    ]:
        plan = plan_query(parse_query(text), SCHEMA, dict(PARAMS))
        assert plan.logical.ops[0] == logical.Lookup(
            anchor, "Person", "name", plan.logical.ops[0].value, executor="csr"
        )
        t = plan.traversal
        assert t.anchor == "p01" and t.vars[0] == anchor
        assert [(c.position, c.prop, c.op, c.value) for c in t.conds] == [(0, "age", ">", 3)]
    text = "MATCH (a:Person)-[:Knows]->(b) WHERE a.name = $s AND a.name = $t RETURN b.name"
    plan = plan_query(parse_query(text), SCHEMA, dict(PARAMS))  # two: neither anchors
    assert isinstance(plan.logical.ops[0], logical.NodeScan) and plan.traversal.anchor is None


def test_the_traversal_is_built_from_the_marked_operators():
    """A first MATCH read from its end: the traversal's positions, hops and comparisons
    come from the operators, in their order; the walk's relationship list runs back."""
    text = (
        "MATCH (b)-[r:Knows*1..2]->(c)<-[f:Follows]-(a:Person {name: $s}) "
        "WHERE c.age >= 30 AND (b.age > 1 OR b.age < 0) RETURN b.name ORDER BY b.name"
    )
    plan = plan_query(parse_query(text), SCHEMA, dict(PARAMS))
    m = plan.csr_match
    assert plan.traversal is None and m is not None
    t = m.traversal
    assert (t.anchor, t.types, t.vars) == ("p01", ("Person",) * 3, ("a", "c", "b"))
    assert [(h.edge, h.direction, h.low, h.high, h.var) for h in t.hops] == [
        ("Follows", "out", 1, 1, "f"),
        ("Knows", "in", 1, 2, "r"),
    ]
    assert [(c.position, c.prop, c.op, c.value) for c in t.conds] == [(1, "age", ">=", 30)]
    assert m.reverse  # read from its end: r's list runs the other way
    assert [(v.name, v.kind, v.index, v.props) for v in m.vars] == [
        ("a", "node", 0, ("name",)),
        ("c", "node", 1, ("age",)),
        ("b", "node", 2, ("name", "age")),
        ("f", "edge", 0, ()),
        ("r", "edges", 1, ()),
    ]


def _lance_ends(ops) -> list[tuple[bool, bool]]:
    """For each path search of the plan, in order: which of its ends the rule says a
    Lance lookup selects."""
    out = []
    for op in ops:
        if isinstance(op, logical.OptionalJoin):
            out += _lance_ends(op.ops)
        elif isinstance(op, logical.ShortestPath) and op.executor == "pathsearch":
            lance = tuple(bool(s) and ops[s[0]].executor == "lance" for s in op.seeds)
            for selected, end in zip(lance, op.seeds, strict=True):  # all of an end's or none
                assert all((ops[i].executor == "lance") == selected for i in end)
            out.append(lance)
    return out


def _lookup_seeds(plan) -> list[tuple[bool, bool]]:
    """For each path search the planner prepared: which of its two seeds the executor
    reads by a Lance lookup (`Seed.lookup`) rather than a SQL statement."""
    seeds = {s.frontier: s for s in plan.seeds}
    return [
        (seeds[s.starts].lookup is not None, seeds[s.targets].lookup is not None)
        for s in plan.searches
    ]


def test_explain_carries_the_logical_plan(social):
    from graphlake.query.executor import LOGICAL_PLAN_KEY

    for text, executors in [
        ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN count(b)", {"csr"}),
        ("MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name ORDER BY b.name", {"csr", "sql"}),
        ("MATCH p = (a:Person {name: $s})-[:Knows]->(b) RETURN b.name ORDER BY b.name", {"sql"}),
    ]:
        report = social.query(text, {"s": "p02"}, explain=True)
        shown = report.schema.metadata[LOGICAL_PLAN_KEY].decode()
        assert shown == _logical(text).text()
        assert {line.rsplit("[", 1)[1].rstrip("]") for line in shown.splitlines()} == executors
        assert set(report.column("executor").to_pylist()) == executors  # the steps ran there
        assert report.num_rows >= 2 and all(r is not None for r in report.column("rows"))


def test_explain_of_a_path_search_names_its_lance_seeds(social):
    from graphlake.query.explained import logical_plan_lines

    text = (
        "MATCH p = shortestPath((a:Person {name: $s})-[:Follows*..6]->(b:Person {name: $t}))"
        " RETURN length(p)"
    )
    report = social.query(text, {"s": "p01", "t": "p07"}, explain=True)
    assert logical_plan_lines(report) == [
        "Project length(p)  [sql]",
        "ShortestPath p = (a)-[:Follows*1..6]->(b)  [pathsearch]",
        "Lookup (b:Person) by name = $t  [lance]",
        "Lookup (a:Person) by name = $s  [lance]",
    ]
    # the seeds' lookups ran before the steps; the search answered the walk's step
    assert "csr" in report.column("executor").to_pylist()
