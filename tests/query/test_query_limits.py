"""Issue 22, items 2-4 in the library: time limits from the first step (parse, plan,
prefetch), rounded timeout messages naming what to change, parameters bound as values
(never in the SQL text), the size cap on generated SQL, and the hop cap of a MATCH."""

from __future__ import annotations

import time

import pytest

from graphlake.errors import CypherError, QueryTimeoutError, QueryTooLargeError
from graphlake.query import executor
from graphlake.query.executor import compile_query, run_query
from graphlake.read.snapshot import Snapshot
from graphlake.read.sql import DEFAULT_TIMEOUT_S, SqlLimits, run_sql, seconds


def test_the_library_default_timeout_is_60_s() -> None:
    assert DEFAULT_TIMEOUT_S == 60.0


def test_timeouts_are_rounded_and_say_what_to_change() -> None:
    assert seconds(29.99998737100009) == "30"
    assert seconds(0.25) == "0.25"

    class NoTables:
        def datasets(self) -> dict:
            time.sleep(0.3)
            return {}

    with pytest.raises(QueryTimeoutError) as info:
        run_sql(NoTables(), "SELECT 1", timeout_s=0.1)  # type: ignore[arg-type]
    assert "after 0.1 s" in str(info.value) and "raise timeout_s" in str(info.value)


def test_parsing_and_planning_count_against_the_timeout(social, monkeypatch) -> None:
    real = executor.parse_query

    def slow(text: str):
        time.sleep(0.6)
        return real(text)

    monkeypatch.setattr(executor, "parse_query", slow)
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError, match=r"after 0\.3 s"):
        social.query("MATCH (n:Person) RETURN count(*) AS n", timeout_s=0.3)
    assert time.monotonic() - started < 1.5


def test_prefetch_counts_against_the_timeout(social, monkeypatch) -> None:
    real = Snapshot.dataset

    def slow(self, name):
        time.sleep(0.3)
        return real(self, name)

    monkeypatch.setattr(Snapshot, "dataset", slow)
    name = social.query("MATCH (n:Person) RETURN n.name AS name LIMIT 1").column(0)[0].as_py()
    query = (
        "MATCH (a:Person {name: $n})-[:Knows]->(b:Person)-[:Knows]->(c:Person)"
        "-[:Knows]->(d:Person) RETURN count(*) AS n"
    )
    with pytest.raises(QueryTimeoutError, match=r"after 0\.5 s"):
        social.query(query, {"n": name}, timeout_s=0.5)


def test_parameters_are_bound_not_spliced(social) -> None:
    needle = "needle-" + "x" * 1000
    text = "RETURN " + " + ".join(["size($s)"] * 50) + " AS n, $xs AS xs, $m AS m"
    params = {"s": needle, "xs": [1, 2, 3], "m": {"k": "v"}}
    plan = compile_query(social.snapshot(), text, params, SqlLimits())
    assert "needle" not in plan.sql and len(plan.sql) < 10_000
    assert plan.sql.count("$glp_0") == 50
    row = social.query(text, params).to_pylist()[0]
    assert row == {"n": 50 * len(needle), "xs": [1, 2, 3], "m": {"k": "v"}}
    # Integers keep Cypher's 64 bits, as literals did.
    big = social.query("RETURN $xs[0] * 3000000000 AS n", {"xs": [3]}).to_pylist()
    assert big == [{"n": 9_000_000_000}]


def test_a_string_parameter_still_filters(social) -> None:
    name = social.query("MATCH (n:Person) RETURN n.name AS name LIMIT 1").column(0)[0].as_py()
    got = social.query(
        "MATCH (n:Person) WHERE n.name = $name RETURN n.name AS name", {"name": name}
    ).to_pylist()
    assert got == [{"name": name}]


def test_the_generated_sql_has_a_size_cap(social, monkeypatch) -> None:
    monkeypatch.setattr(executor, "MAX_SQL_CHARS", 200)
    with pytest.raises(QueryTooLargeError, match="characters of SQL"):
        run_query(social.snapshot(), "MATCH (a:Person)-[:Knows]->(b:Person) RETURN a, b")


def test_fixed_hops_are_capped_per_match(social) -> None:
    chain = "(a:Person)" + "-[:Knows]->(:Person)" * 21
    started = time.monotonic()
    with pytest.raises(CypherError, match="at most 20 hops"):
        social.query(f"MATCH {chain} RETURN count(*) AS n")
    assert time.monotonic() - started < 2
    with pytest.raises(CypherError, match="at most 20 hops"):
        social.query(
            "MATCH (a:Person)-[:Knows*1..10]->(b:Person)-[:Knows*1..10]->(c:Person)"
            "-[:Knows]->(d:Person) RETURN count(*) AS n"
        )
    twenty = "(a:Person)" + "-[:Knows]->(:Person)" * 3
    assert social.query(f"MATCH {twenty} RETURN count(*) AS n").num_rows == 1
