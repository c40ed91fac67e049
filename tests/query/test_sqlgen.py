"""The SQL builders of query/sqlgen, without storage: the text each writes where it has a
choice to make, and (in an in-memory DuckDB) that what they write runs and means it."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from graphlake.query import sqlgen
from graphlake.query.sqlgen import EdgeRows, NodeRows


@pytest.mark.parametrize(
    ("value", "sql"),
    [
        (None, "NULL"),
        (True, "TRUE"),
        (3, "3::BIGINT"),
        (2**63, f"{2**63}::HUGEINT"),
        (1.5, "1.5::DOUBLE"),
        (float("inf"), "'inf'::DOUBLE"),
        ("it's", "'it''s'"),
        (dt.date(2024, 1, 2), "DATE '2024-01-02'"),
        (dt.datetime(2024, 1, 2, 3, 4), "TIMESTAMP '2024-01-02T03:04:00'"),
        ([1, 2], "[1::BIGINT, 2::BIGINT]"),
        ({}, "NULL"),
        ({"k": 1}, "{'k': 1::BIGINT}"),
    ],
)
def test_literal(value, sql):
    assert sqlgen.literal(value) == sql
    back = duckdb.connect().execute(f"SELECT {sql}").fetchone()[0]
    assert back == (None if value == {} else value)  # an empty map is null


def test_literal_refuses_other_values():
    with pytest.raises(TypeError, match="no literal for object"):
        sqlgen.literal(object())


def test_parameters_and_types():
    assert sqlgen.param(sqlgen.param_name(0), None) == "$glp_0"
    assert sqlgen.param("glp_1", "VARCHAR[]") == "CAST($glp_1 AS VARCHAR[])"
    assert sqlgen.param_names("$glp_1 + $glp_12 - $glp_1x") == {"glp_1", "glp_12"}
    assert sqlgen.struct_type([("a b", "BIGINT"), ('q"', "VARCHAR")]) == (
        'STRUCT("a b" BIGINT, "q""" VARCHAR)'
    )
    assert sqlgen.mentions('SELECT * FROM "Person"', "Person")
    assert not sqlgen.mentions('SELECT * FROM "Persons"', "Person")


def test_select_where_and_paging():
    assert sqlgen.where([]) == ""
    assert sqlgen.where(["a", "b"]) == " WHERE a AND b"
    assert sqlgen.select(["x"], "t", ["c"], distinct=True) == "SELECT DISTINCT x FROM t WHERE c"
    assert sqlgen.page(None, None) == ""
    assert sqlgen.page(5, None) == " LIMIT 5"
    assert sqlgen.page(None, 2) == " OFFSET 2"
    assert sqlgen.page(5, 2) == " LIMIT 5 OFFSET 2"
    assert sqlgen.exists([], []) == "EXISTS (SELECT 1 FROM (SELECT 1) AS __one)"
    assert sqlgen.named("x + 1", 'a"b') == 'x + 1 AS "a""b"'


def test_nulls_sort_last_going_up_and_first_going_down():
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (2), (NULL), (1)) AS v(x)")
    up = con.execute(f"SELECT x FROM t ORDER BY {sqlgen.sort_key('x', False)}").fetchall()
    down = con.execute(f"SELECT x FROM t ORDER BY {sqlgen.sort_key('x', True)}").fetchall()
    assert up == [(1,), (2,), (None,)] and down == [(None,), (2,), (1,)]


def test_ctes():
    assert sqlgen.with_ctes([], "SELECT 1") == "SELECT 1"
    plain = sqlgen.cte("s1", "SELECT 1")
    walk = sqlgen.cte("__walk1", "SELECT 2", sqlgen.WALK_COLUMNS, sqlgen.SEARCH_KEY)
    assert plain == "s1 AS (SELECT 1)"
    assert walk.startswith(
        "__walk1(start, node, label, edges, nodes, depth) USING KEY (start, node) AS ("
    )
    assert sqlgen.with_ctes([plain], "SELECT * FROM s1") == (
        "WITH RECURSIVE s1 AS (SELECT 1) SELECT * FROM s1"
    )


def _graph() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE P AS SELECT * FROM (VALUES ('a', 1), ('b', 2), ('c', 3)) v(id, age)")
    con.execute(
        "CREATE TABLE K AS SELECT * FROM (VALUES ('k1', 'a', 'b'), ('k2', 'b', 'c'), "
        "('k3', 'c', 'a'), ('k4', 'a', 'a')) v(id, src, dst)"
    )
    return con


def test_node_and_edge_rows():
    assert sqlgen.node_rows([]) == "(SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS _label)"
    assert sqlgen.edge_rows([]).endswith("WHERE FALSE)")
    con = _graph()
    nodes = sqlgen.node_rows([NodeRows("P", "P", ["age"])])
    assert con.execute(f"SELECT id, _label, age FROM {nodes} ORDER BY id").fetchall() == [
        ("a", "P", 1),
        ("b", "P", 2),
        ("c", "P", 3),
    ]
    both = sqlgen.edge_rows(
        [EdgeRows("K", "K", True, "P", "P", []), EdgeRows("K", "K", False, "P", "P", [], True)]
    )
    rows = con.execute(f"SELECT _key, _a, _b FROM {both} ORDER BY _key, _a").fetchall()
    # each edge both ways, the self-loop k4 once
    assert rows == [
        ("K:k1", "a", "b"),
        ("K:k1", "b", "a"),
        ("K:k2", "b", "c"),
        ("K:k2", "c", "b"),
        ("K:k3", "a", "c"),
        ("K:k3", "c", "a"),
        ("K:k4", "a", "a"),
    ]
    r = con.execute(f"SELECT {sqlgen.edge_struct('r', [])} FROM {both} AS r LIMIT 1").fetchone()
    assert set(r[0]) == set(sqlgen.EDGE_FIELDS)


def test_conditions():
    assert sqlgen.label_in("n", []) == sqlgen.FALSE
    assert sqlgen.label_in("n", ["A", "B"]) == "\"n\"._label IN ('A', 'B')"
    assert sqlgen.hop("r", "a", "b", False, False) == ['"r"._a = "a".id', '"r"._b = "b".id']
    assert sqlgen.hop("r", "a", "b", True, True)[2:] == [
        '"r"._al = "a"._label',
        '"r"._bl = "b"._label',
    ]
    assert sqlgen.different("x", False, "y", False) == '"x"._key <> "y"._key'
    assert sqlgen.different("x", False, "w", True) == 'NOT list_contains("w".edges, "x"._key)'
    assert sqlgen.different("w", True, "x", False) == 'NOT list_contains("w".edges, "x"._key)'
    assert sqlgen.different("v", True, "w", True) == 'NOT list_has_any("v".edges, "w".edges)'
    assert sqlgen.walk_ends("w", "a", "b") == ['"w".start = "a".id', '"w".node = "b".id']
    assert sqlgen.walk_ends("w", "a", "b", True)[2] == '"w".label = "b"._label'


def test_paths():
    assert sqlgen.path([], ['["a".id]'], []) == (
        'struct_pack(length := 0, nodes := ["a".id], rels := [])'
    )
    assert sqlgen.path(["1", "1"], ["x", "y"], ["r"]) == (
        "struct_pack(length := 1 + 1, nodes := list_concat(x, y), rels := r)"
    )
    assert sqlgen.walk_lists("w", False) == (
        '"w".depth',
        '"w".edges',
        'list_slice("w".nodes, 2, -1)',
    )
    assert sqlgen.walk_lists("w", True)[1:] == (
        'list_reverse("w".edges)',
        'list_slice(list_reverse("w".nodes), 2, -1)',
    )


def _edges() -> str:
    return sqlgen.edge_rows([EdgeRows("K", "K", True, "P", "P", [])])


def test_a_walk_uses_each_edge_once_per_path():
    con = _graph()
    seed = sqlgen.selected_seed(
        "s", sqlgen.node_rows([NodeRows("P", "P", [])]), ["(\"s\".id = 'a')"]
    )
    body = sqlgen.walk("__walk1", seed, _edges(), 4)
    sql = sqlgen.with_ctes(
        [sqlgen.cte("__walk1", body, sqlgen.WALK_COLUMNS)],
        "SELECT edges FROM __walk1 WHERE depth > 0",
    )
    paths = {tuple(r[0]) for r in con.execute(sql).fetchall()}
    assert ("K:k4", "K:k4") not in paths and ("K:k4",) in paths
    assert all(len(set(p)) == len(p) for p in paths)
    assert ("K:k1", "K:k2", "K:k3", "K:k4") in paths


def test_a_breadth_first_walk_keeps_the_shortest_depth():
    con = _graph()
    rows = sqlgen.node_rows([NodeRows("P", "P", [])])
    seed = sqlgen.selected_seed("s", rows, ["(\"s\".id = 'a')"])
    targets = sqlgen.selected_seed("t", rows, ["(\"t\".id = 'c')"])
    body = sqlgen.walk("__walk1", seed, _edges(), 5, targets)
    sql = sqlgen.with_ctes(
        [sqlgen.cte("__walk1", body, sqlgen.WALK_COLUMNS, sqlgen.SEARCH_KEY)],
        "SELECT node, depth FROM __walk1 WHERE node = 'c'",
    )
    assert con.execute(sql).fetchall() == [("c", 2)]


def test_projection_shapes():
    plain = sqlgen.projection(
        "s1",
        ['x AS "x"'],
        distinct=False,
        grouped=False,
        names=["x"],
        keys=[],
        limit=None,
        offset=None,
        condition=None,
    )
    assert plain == 'SELECT x AS "x" FROM s1 AS __p'
    grouped = sqlgen.projection(
        "s1",
        ['g AS "g"', 'count(*) AS "n"'],
        distinct=True,
        grouped=True,
        names=["g", "n"],
        keys=['"n" DESC NULLS FIRST'],
        limit=3,
        offset=1,
        condition='"n" > 1',
    )
    assert grouped == (
        'SELECT * FROM (SELECT "g", "n" FROM (SELECT DISTINCT g AS "g", count(*) AS "n" '
        'FROM s1 AS __p GROUP BY ALL) AS __g ORDER BY "n" DESC NULLS FIRST LIMIT 3 OFFSET 1)'
        ' AS __q WHERE "n" > 1'
    )


def test_an_optional_match_keeps_rows_without_a_match():
    con = _graph()
    start = sqlgen.select(["1 AS __unit", "'a' AS \"x\""], "(VALUES (1)) AS v(i)")
    start += " UNION ALL SELECT 1, 'zz'"
    numbered = sqlgen.numbered("s0")
    nodes = sqlgen.named(sqlgen.node_rows([NodeRows("P", "P", [])]), "m")
    step = sqlgen.optional_match(
        "s1", ["x"], ["m"], ['"m".id AS "m"'], [nodes], ['"m".id = __p."x"']
    )
    sql = sqlgen.with_ctes([sqlgen.cte("s0", start), sqlgen.cte("s1", numbered)], step)
    assert sorted(con.execute(f"SELECT x, m FROM ({sql})").fetchall()) == [
        ("a", "a"),
        ("zz", None),
    ]


def test_a_call_step_joins_the_answer_to_the_node_rows():
    con = _graph()
    con.execute("CREATE TABLE __call1 AS SELECT 'b' AS id, 'P' AS type, 0.5 AS rank")
    nodes = sqlgen.node_rows([NodeRows("P", "P", ["age"])])
    step = sqlgen.call("s0", [], "__call1", [(None, "n"), ("rank", "r")], nodes, False, '"r" > 0.1')
    sql = sqlgen.with_ctes([sqlgen.cte("s0", sqlgen.START)], step)
    ((n, r),) = con.execute(f"SELECT n, r FROM ({sql})").fetchall()
    assert (n["id"], n["age"], float(r)) == ("b", 2, 0.5)


def test_bounded_keeps_a_trailing_comment_inside():
    con = duckdb.connect()
    assert len(con.execute(sqlgen.bounded("SELECT * FROM range(10) -- all", 3)).fetchall()) == 3


# --- expressions (sqlgen.expressions): what each writes means Cypher's semantics in DuckDB

sx = sqlgen.expressions


def _value(sql: str) -> object:
    return duckdb.connect().execute(f"SELECT {sql}").fetchone()[0]


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        (sx.list_index("[10, 20, 30]", "0"), 10),  # Cypher counts from 0
        (sx.list_index("[10, 20, 30]", "-1"), 30),  # and -1 is the last item
        (sx.int_divide("7", "2"), 3),  # integers divide to an integer
        (sx.divide("7", "2"), 3.5),
        (sx.in_list("1", []), False),
        (sx.in_values("3", "[1, NULL]"), None),  # no match and a null: null
        (sx.in_values("1", "[1, NULL]"), True),
        (sx.map_of([]), None),  # the empty map is null
        (sx.map_of([("k", "1")]), {"k": 1}),
        (sx.range_of("1", "3"), [1, 2, 3]),  # Cypher's range includes its end
        (sx.range_of("3", "1", "-1"), [3, 2, 1]),
        (sx.substring("'hello'", "1", "3"), "ell"),  # from 0
        (sx.concat_strings("'a'", "1"), "a1"),
        (sx.xor("TRUE", "FALSE"), True),
        (sx.aggregate("sum", "x", False, False, True).replace("x", "NULL::BIGINT"), 0),
        (sx.case("1", [("1", "'one'")], "'other'"), "one"),
        (sx.length("'abc'", string=True), 3),
        (sx.length("[1, 2]", string=False), 2),
        (sx.string_match("=~", "'abc'", "'a.c'"), True),
        (sx.temporal_field("DATE '2024-03-02'", "month"), 3),
    ],
)
def test_expressions_mean_cyphers_semantics(sql: str, value: object):
    assert _value(sql) == value


def test_vector_distance_nulls_a_missing_vector():
    a, b = "[1.0, 0.0]", "[0.0, 1.0]"
    assert _value(sx.vector_distance(a, b, "cosine")) == pytest.approx(1.0)
    assert _value(sx.vector_distance(a, b, "l2")) == pytest.approx(2.0)
    assert _value(sx.vector_distance(a, b, "dot")) == pytest.approx(1.0)
    assert _value(sx.vector_distance("NULL", b, "cosine")) is None


def test_entities_compare_and_count_by_identity():
    assert sx.identity_comparison("=", '"a"', '"b"') == '("a".id = "b".id)'
    assert sx.aggregate("count", '"a"', True, True, False) == 'count(DISTINCT "a".id)'
    collect = sx.aggregate("collect", '"a"', False, True, False)
    assert collect == 'coalesce(list("a") FILTER (WHERE "a" IS NOT NULL), [])'
