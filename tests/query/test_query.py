"""Cypher queries: semantics checked by hand (relationship uniqueness, old commits,
explain, the intended differences from LadybugDB) and every bad-input case."""

from __future__ import annotations

import itertools

import pytest

import graphlake as gl
from graphlake.errors import (
    CypherError,
    CypherNameError,
    CypherParameterError,
    CypherProcedureError,
    CypherSyntaxError,
    CypherTypeError,
    CypherWriteError,
    GraphLakeError,
    QueryError,
)
from graphlake.query.executor import run_query
from graphlake.query.patterns import MAX_HOPS
from graphlake.read.sql import SqlLimits

LOOPS = """
node P { name: String @key }
edge K: P -> P
"""
# a->b twice (parallel), b->a, a self-loop on a, b->c.
EDGES = [("e1", "a", "b"), ("e2", "a", "b"), ("e3", "b", "a"), ("e4", "a", "a"), ("e5", "b", "c")]


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> gl.Graph:
    g = gl.Graph.init(str(tmp_path_factory.mktemp("loops") / "g"), LOOPS)
    with g.write(message="v1") as w:
        w.insert("P", [{"name": n} for n in "abc"])
        w.insert("K", [{"id": i, "src": s, "dst": d} for i, s, d in EDGES])
    return g


def trails(start: str, low: int, high: int, undirected: bool = False) -> list[tuple]:
    """Every path from `start` of low..high edges that uses no edge twice: (end, edges)."""
    steps = [(i, s, d) for i, s, d in EDGES]
    if undirected:
        steps += [(i, d, s) for i, s, d in EDGES if s != d]
    out, frontier = [], [(start, ())]
    for depth in range(1, high + 1):
        frontier = [
            (d, (*used, i))
            for node, used in frontier
            for i, s, d in steps
            if s == node and i not in used
        ]
        if depth >= low:
            out += frontier
    return out


def rows(table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


# --- relationship uniqueness ------------------------------------------------------------


@pytest.mark.parametrize("low,high", [(1, 1), (1, 2), (1, 3), (2, 4), (0, 2), (1, 10)])
def test_variable_length_uses_each_relationship_once_per_path(loops, low, high):
    got = loops.query(f"MATCH (x:P {{name: 'a'}})-[:K*{low}..{high}]->(y) RETURN y.name, count(*)")
    expected: dict[str, int] = {}
    for end, _ in trails("a", low, high) + ([("a", ())] if low == 0 else []):
        expected[end] = expected.get(end, 0) + 1
    assert rows(got) == sorted(expected.items())


def test_unbounded_star_is_capped_and_finite_on_cycles(loops):
    got = loops.query("MATCH (x:P {name: 'a'})-[:K*]->(y) RETURN count(*)")
    assert got.column(0).to_pylist() == [len(trails("a", 1, MAX_HOPS))]
    # Every trail here is at most 5 edges long (there are 5 edges): the cap does not cut.
    assert len(trails("a", 1, MAX_HOPS)) == len(trails("a", 1, 5)) == 27


def test_undirected_variable_length_and_self_loop_once(loops):
    got = loops.query("MATCH (x:P {name: 'c'})-[:K*1..3]-(y) RETURN y.name, count(*)")
    expected: dict[str, int] = {}
    for end, _ in trails("c", 1, 3, undirected=True):
        expected[end] = expected.get(end, 0) + 1
    assert rows(got) == sorted(expected.items())
    # A self-loop matches an undirected pattern once (LadybugDB: twice).
    assert loops.query("MATCH (x:P)-[r:K]-(x) RETURN r.id").to_pylist() == [{"r.id": "e4"}]


def test_fixed_length_chain_never_repeats_a_relationship(loops):
    got = loops.query("MATCH (x)-[r1:K]->(y)-[r2:K]->(z) RETURN r1.id, r2.id")
    expected = sorted(
        (i1, i2)
        for (i1, _, d1), (i2, s2, _) in itertools.product(EDGES, EDGES)
        if d1 == s2 and i1 != i2
    )
    assert rows(got) == expected  # the self-loop e4 never follows itself
    across = loops.query("MATCH (x)-[r1:K]->(y), (u)-[r2:K]->(v) RETURN count(*)")
    assert across.column(0).to_pylist() == [len(EDGES) * (len(EDGES) - 1)]


def test_named_path_lists_nodes_and_relationships(loops):
    got = loops.query(
        "MATCH p = (x:P {name: 'c'})<-[:K*2]-(y) RETURN length(p), nodes(p), relationships(p)"
    ).to_pylist()
    assert sorted(map(str, got)) == sorted(
        map(
            str,
            [
                {"length(p)": 2, "nodes(p)": ["c", "b", "a"], "relationships(p)": ["K:e5", "K:e1"]},
                {"length(p)": 2, "nodes(p)": ["c", "b", "a"], "relationships(p)": ["K:e5", "K:e2"]},
            ],
        )
    )


def test_shortest_path_between_bound_nodes(loops):
    q = (
        "MATCH p = shortestPath((x:P {name: $a})-[:K*]->(y:P {name: $b})) "
        "RETURN length(p), nodes(p)"
    )
    assert loops.query(q, {"a": "a", "b": "c"}).to_pylist() == [
        {"length(p)": 2, "nodes(p)": ["a", "b", "c"]}
    ]
    assert loops.query(q, {"a": "c", "b": "a"}).num_rows == 0  # no path c -> a
    undirected = (
        "MATCH p = shortestPath((x:P {name: 'c'})-[:K*..3]-(y:P {name: 'a'})) RETURN length(p)"
    )
    assert loops.query(undirected).to_pylist() == [{"length(p)": 2}]
    bound = loops.query(
        "MATCH (x:P {name: 'a'}), (y:P) MATCH p = shortestPath((x)-[:K*]->(y)) "
        "RETURN y.name, length(p)"
    )
    assert rows(bound) == [("b", 1), ("c", 2)]
    with pytest.raises(CypherError, match="needs both end nodes bound"):
        loops.query("MATCH p = shortestPath((x:P)-[:K*]->(y:P {name: 'a'})) RETURN p")


ANCHORED = [
    "MATCH (a:Person {name: 'p02'})-[:Knows]->(b)-[:Knows]->(c) RETURN b.name, c.name, c.age",
    "MATCH (a:Person {name: $who, age: 55})<-[:Knows]-(b) OPTIONAL MATCH (b)-[:WorksAt]->(c) "
    "RETURN b.name, c.name",
    "MATCH (a:Person {name: 'p04'})-[r:Knows]->(b:Person)-[:Follows]->(c) "
    "RETURN r.id, b.name, c.name",
    "UNWIND ['p04', 'p05'] AS x MATCH (a:Person {name: x})-[:Knows*1..2]->(b) RETURN x, b.name",
    "MATCH (a:Person {name: 'p06'}) OPTIONAL MATCH (a)-[:Knows]->(b {city: 'Oslo'}) RETURN b.name",
]


@pytest.mark.parametrize("text", ANCHORED)
def test_anchored_traversal_reads_frontiers_and_matches_whole_tables(social, monkeypatch, text):
    """A chain from a node selected by constants reads each hop through the frontier of
    ids; with no room for any frontier it joins whole tables: the same rows either way."""
    from graphlake.query import executor

    params = {"who": "p03"}
    by_frontier = rows(social.query(text, params))
    monkeypatch.setattr(executor, "PREFETCH_MAX_IDS", 0)
    assert rows(social.query(text, params)) == by_frontier
    assert by_frontier or "Oslo" in text


SHORTEST = [
    "MATCH p = shortestPath((a:Person {name: 'p00'})-[:Follows*..6]->(b:Person)) "
    "WHERE b.age > 30 RETURN b.name, length(p)",
    "MATCH p = shortestPath((a:Person {name: 'p03'})-[:Knows*0..4]-(b:Person)) "
    "WHERE b.age > 40 RETURN b.name, length(p), size(nodes(p))",
    "MATCH p = shortestPath((a:Person)-[:Follows*]->(b:Person {name: 'p07'})) "
    "WHERE a.city = 'Oslo' RETURN a.name, length(p)",
]


@pytest.mark.parametrize("text", SHORTEST)
def test_shortest_path_search_through_lance_matches_the_sql_search(social, monkeypatch, text):
    """The frontier-by-frontier search (Lance indexes) and DuckDB's breadth-first CTE
    find paths of the same lengths to the same nodes."""
    from graphlake.query import executor

    by_lance = rows(social.query(text))
    monkeypatch.setattr(executor, "SEARCH_MAX_STARTS", 0)
    assert rows(social.query(text)) == by_lance
    assert by_lance


# --- commits, explain, results ------------------------------------------------------------


def test_a_query_on_an_old_commit_sees_that_commit(loops, tmp_path):
    g = gl.Graph.init(str(tmp_path / "g"), LOOPS)
    with g.write(message="v1") as w:
        w.insert("P", [{"name": "a"}, {"name": "b"}])
        w.insert("K", [{"id": "e1", "src": "a", "dst": "b"}])
    first = g.head().id
    with g.write(message="v2") as w:
        w.insert("P", [{"name": "c"}])
        w.insert("K", [{"id": "e2", "src": "b", "dst": "c"}])
    q = "MATCH (x:P)-[:K]->(y) RETURN y.name"
    assert rows(g.query(q)) == [("b",), ("c",)]
    assert rows(g.query(q, branch=first)) == [("b",)]
    assert rows(g.query(q, branch="main~1")) == [("b",)]


def test_explain_returns_the_plan_with_row_counts(loops):
    plan = loops.query(
        "MATCH (x:P {name: 'a'})-[:K*1..2]->(y) RETURN y.name", explain=True
    ).to_pylist()
    ops = [s["operation"] for s in plan]
    assert ops[0].startswith("start") and ops[-1] == "RETURN y.name"
    assert any(o.startswith("walk K *1..2 from x") for o in ops)
    assert plan[-1]["rows"] == len(trails("a", 1, 2))
    assert all(s["sql"] for s in plan)


def test_parameters_of_every_kind(social):
    got = social.query(
        "MATCH (n:Person) WHERE n.name IN $names AND n.name STARTS WITH $p RETURN n.name",
        {"names": ["p01", "p11", "x"], "p": "p1"},
    )
    assert rows(got) == [("p11",)]
    assert social.query(
        "RETURN $x AS x, $y AS y, $z AS z", {"x": 1.5, "y": None, "z": True}
    ).to_pylist() == [{"x": 1.5, "y": None, "z": True}]


def test_string_values_are_data_never_sql(social):
    evil = "x' OR 1=1 --"
    assert social.query("MATCH (n:Person {name: $v}) RETURN n.name", {"v": evil}).num_rows == 0
    assert social.query("MATCH (n:Person) WHERE n.name = 'x\\' OR 1=1 --' RETURN n").num_rows == 0
    with pytest.raises(CypherSyntaxError, match="line 1, column 36: expected"):
        social.query("MATCH (n:Person) WHERE n.name = 'x'' OR 1=1 --' RETURN n")


def test_temporal_and_entity_functions(social):
    got = social.query(
        "MATCH (n:Person {name: 'p00'})-[r:Knows]->(m) WHERE r.id = 'kl1' "
        "RETURN id(n), labels(n), type(r), n.born.year, "
        "date('2020-02-03').month"
    ).to_pylist()
    born = social.get("Person", "p00")["born"]
    assert got == [
        {
            "id(n)": "p00",
            "labels(n)": ["Person"],
            "type(r)": "Knows",
            "n.born.year": born.year if born else None,
            "date('2020-02-03').month": 2,
        }
    ]


def test_a_node_kept_by_an_aggregating_with_keeps_its_properties(social):
    from tests.query.social import social_rows

    fans: dict[str, set[str]] = {}
    for k in social_rows()["Knows"]:
        fans.setdefault(k["dst"], set()).add(k["src"])
    expected = sorted(((a, len(b)) for a, b in fans.items()), key=lambda r: (-r[1], r[0]))
    got = social.query(
        "MATCH (a:Person)<-[:Knows]-(b:Person) WITH a, count(DISTINCT b) AS "
        "fans ORDER BY fans DESC, a.name LIMIT 10 RETURN a.name, fans"
    )
    assert [tuple(r.values()) for r in got.to_pylist()] == expected[:10]
    # The same in RETURN, with the node itself returned; and an unlisted aggregate key.
    got = social.query(
        "MATCH (a:Person)<-[:Knows]-(b:Person) RETURN a, count(DISTINCT b) "
        "AS fans ORDER BY fans DESC, a.name LIMIT 3"
    )
    assert [(r["a"]["name"], r["fans"]) for r in got.to_pylist()] == expected[:3]
    got = social.query(
        "MATCH (a:Person)<-[r:Knows]-(b:Person) WITH r, count(*) AS n "
        "ORDER BY max(r.id) DESC LIMIT 2 RETURN r.id, n, r.since"
    )
    assert got.to_pylist() == [
        {"r.id": "kp2", "n": 1, "r.since": 2002},
        {"r.id": "kp1", "n": 1, "r.since": 2001},
    ]


def test_intended_differences_from_ladybug(social):
    # openCypher: the sum of no values is 0 (LadybugDB: null).
    assert social.query("MATCH (n:Person {name: 'nobody'}) RETURN sum(n.age)").to_pylist() == [
        {"sum(n.age)": 0}
    ]
    # List indexes and substring count from 0 (LadybugDB: from 1).
    assert social.query(
        "RETURN [10, 20, 30][0] AS a, substring('hello', 1, 3) AS b"
    ).to_pylist() == [{"a": 10, "b": "ell"}]
    # id(n) is the node's key (LadybugDB: an internal {offset, table}).
    assert social.query("MATCH (n:Person {name: 'p03'}) RETURN id(n)").to_pylist() == [
        {"id(n)": "p03"}
    ]
    # Returning a node gives its properties with `id` and `_label` (a struct).
    node = social.query("MATCH (n:Company {name: 'c1'}) RETURN n").to_pylist()[0]["n"]
    assert node["id"] == "c1" and node["_label"] == "Company" and "founded" in node


def test_a_returned_relationship_has_only_its_public_fields(social):
    public = {"id", "src", "dst", "_type", "since", "weight"}
    one = "MATCH (a:Person {name: 'p02'})-[r:Knows {id: 'kp1'}]->(b) "
    got = social.query(one + "RETURN r").to_pylist()
    assert got == [
        {
            "r": {
                "id": "kp1",
                "src": "p02",
                "dst": "p03",
                "_type": "Knows",
                "since": 2001,
                "weight": 0.1,
            }
        }
    ]
    # Read backwards, carried by WITH, collected, and unmatched by an OPTIONAL MATCH.
    back = social.query(
        "MATCH (b:Person {name: 'p03'})<-[r:Knows]-(a) WITH r, a RETURN r, collect(r) AS rs"
    ).to_pylist()
    assert {"kp1", "kp2"} <= {r["r"]["id"] for r in back}
    assert all(set(r["r"]) == public and {k for x in r["rs"] for k in x} == public for r in back)
    assert social.query(
        "MATCH (a:Person {name: 'p02'}) OPTIONAL MATCH (a)-[r:WorksAt "
        "{role: 'nobody'}]->(c) RETURN r"
    ).to_pylist() == [{"r": None}]
    # Two types: the union of their properties; an undirected pattern, both ways.
    both = (
        social.query("MATCH (a:Person {name: 'p02'})-[r:Knows|Follows]-(b) RETURN r")
        .column("r")
        .to_pylist()
    )
    assert both and {k for r in both for k in r} == public | {"level"}
    assert {r["_type"] for r in both} <= {"Knows", "Follows"}


def test_a_query_reads_only_the_tables_it_mentions(social):
    from graphlake.query.executor import compile_query

    plan = compile_query(
        social.snapshot(), "MATCH (a:Person)-[:WorksAt]->(c) RETURN c.name", None, SqlLimits()
    )
    assert plan.tables == {"Person", "WorksAt", "Company"}
    plan = compile_query(
        social.snapshot(),
        "MATCH (a:Person {name: 'p1'})-[:Knows*1..2]->(b) RETURN count(b)",
        None,
        SqlLimits(),
    )
    assert plan.tables == {"Person", "Knows"}


# --- bad input: typed errors, nothing changed ----------------------------------------------

BAD = [
    ("MATCH (n:Person RETURN n", CypherSyntaxError, "line 1, column 17: expected"),
    ("MATCH (n:Person)\nRETURN n.name,", CypherSyntaxError, "line 2, column 15"),
    ("MATCH (n:Person) RETURN 'open", CypherSyntaxError, "unterminated string"),
    ("MATCH (n:Persn) RETURN n", CypherNameError, "did you mean 'Person'"),
    ("MATCH (n:Person)-[:Knowz]->(m) RETURN m", CypherNameError, "did you mean 'Knows'"),
    ("MATCH (n:Knows) RETURN n", CypherNameError, "is a relationship type"),
    ("MATCH (n:Person) RETURN n.agee", CypherNameError, "did you mean 'age'"),
    ("MATCH (n:Person) RETURN m.age", CypherNameError, "variable 'm' is not defined"),
    ("MATCH (n:Person) RETURN toUper(n.name)", CypherNameError, "did you mean 'toupper'"),
    (
        "MATCH (n:Person) WHERE n.age > 'old' RETURN n",
        CypherTypeError,
        "cannot compare an integer with a string",
    ),
    ("MATCH (n:Person) WHERE n.name = 3 RETURN n", CypherTypeError, "compare a string"),
    ("MATCH (n:Person) WHERE n.age STARTS WITH 'x' RETURN n", CypherTypeError, "STARTS WITH"),
    ("MATCH (n:Person) WHERE n.name RETURN n", CypherTypeError, "a condition needs"),
    ("MATCH (n:Person) RETURN sum(n.name)", CypherTypeError, "sum() needs"),
    ("CREATE (n:Person {name: 'x'})", CypherWriteError, "line 1, column 1: CREATE"),
    ("MATCH (n) MERGE (m:Person {name: 'x'}) RETURN m", CypherWriteError, "MERGE"),
    ("MATCH (n:Person) SET n.age = 3 RETURN n", CypherWriteError, "SET"),
    ("MATCH (n:Person) DELETE n", CypherWriteError, "DELETE"),
    ("MATCH (n:Person) DETACH DELETE n", CypherWriteError, "DETACH"),
    ("MATCH (n:Person) REMOVE n.age RETURN n", CypherWriteError, "REMOVE"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", CypherWriteError, "LOAD"),
    ("CALL db.labels()", CypherProcedureError, "unknown procedure 'db.labels' (known: pagerank"),
    (
        "MATCH (n:Person) CALL { MATCH (m) RETURN m } RETURN n",
        CypherSyntaxError,
        "line 1, column 18: CALL { ... } subqueries are not supported",
    ),
    (
        "MATCH (n:Person) RETURN n UNION MATCH (m) RETURN m",
        CypherSyntaxError,
        "line 1, column 27: UNION is not supported",
    ),
    ("SELECT name FROM Person", CypherSyntaxError, "`graphlake sql`"),
    ("MATCH (n:Person) RETRUN n.name", CypherSyntaxError, "did you mean RETURN?"),
    ("MACH (n:Person) RETURN n.name", CypherSyntaxError, "did you mean MATCH?"),
    # The lexer reads SKIP off the front of SKIPP: the error names the whole word.
    (
        "MATCH (n:Person) RETURN n SKIPP 3",
        CypherSyntaxError,
        "line 1, column 27: unexpected 'SKIPP'; did you mean SKIP?",
    ),
    ("MATCH (n:Person) WHER n.age > 3 RETURN n", CypherSyntaxError, "did you mean WHERE?"),
    ("MATCH (a:Person)-[:Knows*1..50]->(b) RETURN b", CypherError, f"at most {MAX_HOPS} hops"),
    ("MATCH (a:Person)-[:Knows*3..1]->(b) RETURN b", CypherError, "lower bound"),
    ("MATCH (n:Person) WHERE n.age > $age RETURN n", CypherParameterError, "$age is missing"),
    ("MATCH (n:Person) RETURN n LIMIT -1", CypherError, "non-negative integer"),
    ("MATCH (n:Person) RETURN n LIMIT 1.5", CypherError, "non-negative integer"),
    ("MATCH (n:Person)", CypherError, "must end with RETURN"),
    ("MATCH (n:Person) RETURN n MATCH (m) RETURN m", CypherError, "last clause"),
    ("MATCH (n:Person) RETURN n.name, n.name", CypherError, "used twice"),
    ("MATCH (n:Person) WITH n.age RETURN 1", CypherError, "needs a name"),
    ("MATCH (n:Person) WHERE count(*) > 1 RETURN n", CypherError, "only allowed in WITH"),
    ("RETURN " + "[" * 3000 + "1" + "]" * 3000, CypherSyntaxError, "nested too deeply"),
]


@pytest.mark.parametrize("text,error,words", BAD, ids=[b[0][:60] for b in BAD])
def test_bad_queries_raise_typed_errors(social, text, error, words):
    head = social.head().id
    with pytest.raises(error) as info:
        social.query(text)
    assert words in str(info.value)
    assert isinstance(info.value, QueryError) and isinstance(info.value, GraphLakeError)
    assert social.head().id == head


def test_a_misspelt_keyword_names_what_was_found_and_the_likely_words(social):
    with pytest.raises(CypherSyntaxError) as info:
        social.query("MATCH (p:Person) RETURN p.name LIMT 3")
    message = str(info.value)
    assert "line 1, column 32: found 'LIMT'; did you mean LIMIT?" in message
    assert "mul_op" not in message and "'<='" not in message  # operators are one item
    expected = message.split("expected ", 1)[1]
    assert {"LIMIT", "SKIP", "ORDER BY", "RETURN", "an operator"} <= set(
        expected.replace(" or ", ", ").rstrip(")").split(", ")
    )
    assert len(expected.split(", ")) <= 12
    # A value expected: "an expression", not every token that can start one.
    with pytest.raises(CypherSyntaxError, match="expected an expression, found end of input"):
        social.query("MATCH (n:Person) RETURN n.name,")
    # An unsupported clause's word is still a name where a name fits.
    assert social.query(
        "MATCH (n:Person {name: 'p01'}) RETURN n.name AS call, 1 AS union"
    ).to_pylist() == [{"call": "p01", "union": 1}]


def test_write_clauses_name_commands_that_exist(social):
    import re

    import typer

    from graphlake.cli.app import app
    from graphlake.query.parser import _WRITES

    commands = set(typer.main.get_command(app).commands)
    for word in _WRITES:
        with pytest.raises(CypherWriteError) as info:
            social.query(f"MATCH (n:Person) {word} n RETURN n")
        named = re.findall(r"`graphlake ([\w-]+)", str(info.value))
        assert named and set(named) <= commands, (word, str(info.value))


def test_bad_parameters(social):
    q = "MATCH (n:Person) WHERE n.age > $age RETURN n.name"
    with pytest.raises(CypherParameterError, match=r"\$age has a object value"):
        social.query(q, {"age": object()})
    with pytest.raises(CypherTypeError, match="compare an integer with a string"):
        social.query(q, {"age": "old"})
    with pytest.raises(CypherParameterError, match="LIMIT needs a non-negative integer"):
        social.query("MATCH (n:Person) RETURN n.name LIMIT $n", {"n": "3"})
    with pytest.raises(CypherParameterError, match="mapping"):
        social.query(q, ["age"])


def test_row_cap_timeout_and_length_limits(social):
    with pytest.raises(QueryError, match="more than 3 rows"):
        social.query("MATCH (n:Person) RETURN n.name", max_rows=3)
    with pytest.raises(QueryError, match="timed out"):  # generous: stopped within seconds
        social.query(
            "MATCH (a:Person), (b:Person), (c:Person), (d:Person), (e:Person), "
            "(f:Person) RETURN count(*)",
            timeout_s=0.2,
        )
    with pytest.raises(QueryError, match="longer than 40 characters"):
        run_query(
            social.snapshot(),
            "MATCH (n:Person) RETURN n.name, n.age, n.city",
            limits=SqlLimits(max_query_chars=40),
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("toInteger(2.7)", 2),  # openCypher truncates toward zero; DuckDB's cast rounds
        ("toInteger(-2.7)", -2),
        ("toInteger('2.7')", 2),
        ("toInteger(' -2.7 ')", -2),
        ("toInteger('9007199254740993')", 9007199254740993),  # past 2**53: read exactly
        ("toInteger(9007199254740993)", 9007199254740993),
        ("toInteger('1e3')", 1000),
        ("toInteger('abc')", None),
        ("toInteger(null)", None),
        ("toInteger($v)", 3),
    ],
)
def test_to_integer_truncates_and_keeps_every_digit(loops, text, expected):
    got = loops.query(f"RETURN {text} AS v", {"v": 3.9})
    assert got.to_pylist() == [{"v": expected}]
