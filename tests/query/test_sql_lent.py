"""Arrow tables and Lance datasets a generated statement reads (a first MATCH's
bindings, prefetched rows, a CALL's answer, whole tables) are lent through handles of
DuckDB's client registry under a leading WITH (read.sql._lend) instead of
`con.register` / `unregister`: the answers (their order under ORDER BY) and their schema
are those of the registered path, and nothing stays on the pooled connection after the
statement."""

from __future__ import annotations

import pyarrow as pa
import pytest

from graphlake.query import executor, traverse
from graphlake.read import sql
from tests.query.queries import bound
from tests.query.test_bindings import HAND

PARAMS = {"s": "p03", "names": ["p01", "p02"]}
QUERIES = (
    [q for q, _ in bound(60, seed=53)]
    + HAND
    + [
        "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name ORDER BY b.name DESC LIMIT 2",
        "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) OPTIONAL MATCH (b)-[:Knows]->(c) "
        "RETURN b.name, count(c) ORDER BY b.name",
    ]
)


class Lent:
    """read.sql._lend, counted: the tables it lent."""

    def __init__(self) -> None:
        self.tables = 0
        self._real = sql._lend

    def __call__(self, con, statement, relations, handles):
        out = self._real(con, statement, relations, handles)
        self.tables += len(handles)
        return out


def _rows(table: pa.Table) -> list:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def _registered(g, q: str, monkeypatch, explain: bool = False) -> pa.Table:
    with monkeypatch.context() as m:
        m.setattr(sql, "_lend", lambda con, statement, relations, handles: statement)
        return g.query(q, PARAMS, explain=explain)


@pytest.mark.parametrize("csr", [True, False])  # False: the SQL executor, Lance datasets
def test_lent_tables_answer_as_registered_ones(social, monkeypatch, csr) -> None:
    monkeypatch.setattr(executor, "CSR_TRAVERSAL", csr)
    lent = Lent()
    monkeypatch.setattr(sql, "_lend", lent)
    bad = []
    for q in QUERIES:
        got = social.query(q, PARAMS)
        expected = _registered(social, q, monkeypatch)
        if got.schema != expected.schema or _rows(got) != _rows(expected):
            bad.append(q)
        elif " ORDER BY " in q and not got.equals(expected):  # a total order
            bad.append(f"order: {q}")
    assert not bad, f"{len(bad)} differ:\n" + "\n".join(bad[:10])
    assert lent.tables >= len(QUERIES) // 2  # most of them read bindings


def test_explain_steps_run_on_lent_tables(social, monkeypatch) -> None:
    q = "MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name ORDER BY b.name"
    got = social.query(q, explain=True).to_pylist()
    expected = _registered(social, q, monkeypatch, explain=True).to_pylist()
    assert [r["rows"] for r in got] == [r["rows"] for r in expected]
    assert any(r["executor"] == "csr" for r in got)


def test_nothing_stays_on_the_pooled_connection(social) -> None:
    social.query("MATCH (a:Person {name: 'p02'})-[:Knows]->(b) RETURN b.name ORDER BY b.name")
    key = (None, None)
    con = sql._POOL.take(key)
    try:
        with pytest.raises(Exception, match=traverse.BINDINGS):
            con.execute(f"SELECT * FROM {traverse.BINDINGS}").fetchall()
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views()").fetchall()]
        assert traverse.BINDINGS not in names + views
    finally:
        sql._POOL.give(key, con, [])


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("SELECT x FROM t", 'WITH "t" AS NOT MATERIALIZED (SELECT * FROM "{h}")\nSELECT x FROM t'),
        (
            "WITH RECURSIVE s0 AS (SELECT 1) SELECT x FROM s0, t",
            'WITH RECURSIVE "t" AS NOT MATERIALIZED (SELECT * FROM "{h}"),\n'
            "s0 AS (SELECT 1) SELECT x FROM s0, t",
        ),
        ("  with s0 AS (SELECT 1) SELECT 1", None),
        ("(SELECT 1) UNION (SELECT 2)", "(SELECT 1) UNION (SELECT 2)"),  # left to register
    ],
)
def test_the_leading_with(statement, expected) -> None:
    import duckdb

    con = duckdb.connect(":memory:")
    relations: dict[str, object] = {"t": pa.table({"x": [1]}), "d": object()}
    handles: list[object] = []
    got = sql._lend(con, statement, relations, handles)
    if expected is None:
        assert got.lstrip().startswith("with ") and '"t" AS NOT MATERIALIZED' in got
    elif handles:
        assert got == expected.format(h=handles[0].name)  # type: ignore[attr-defined]
    else:
        assert got == expected
    assert ("t" in relations) == (not handles) and "d" in relations  # only Arrow tables
    con.close()
