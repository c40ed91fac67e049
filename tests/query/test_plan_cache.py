"""The plan cache (query.plancache): a repeated text is neither parsed nor planned again,
other parameter values are bound into the cached plan and answer exactly as a fresh
plan does, inlined values (LIMIT, regexes, UNWIND lists) key their own plans, and the
cache is bounded and keyed by schema and parameter types."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from graphlake.errors import CypherError, CypherParameterError, CypherTypeError
from graphlake.query import executor, plancache
from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from graphlake.schema.parser import parse_schema
from tests.query import queries
from tests.query.social import SCHEMA


@pytest.fixture
def counted(monkeypatch):
    """Calls of the parser and planner through the executor."""
    calls = {"parse": 0, "plan": 0}

    def parse(text):
        calls["parse"] += 1
        return parse_query(text)

    def plan(*args):
        calls["plan"] += 1
        return plan_query(*args)

    monkeypatch.setattr(executor, "parse_query", parse)
    monkeypatch.setattr(executor, "plan_query", plan)
    executor.PLANS.clear()
    yield calls
    executor.PLANS.clear()


def test_a_second_run_neither_parses_nor_plans(social, counted):
    q = "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name AS n ORDER BY n"
    first = social.query(q, {"s": "p02"}).to_pylist()
    assert counted == {"parse": 1, "plan": 1}
    assert social.query(q, {"s": "p02"}).to_pylist() == first
    social.query(q, {"s": "p04"})  # another value, same type: bound, not planned
    assert counted == {"parse": 1, "plan": 1}
    assert executor.PLANS.hits == 2
    social.query(q, {"s": "p04", "extra": 1})  # other parameter names: planned
    social.query(q + " ", {"s": "p04"})  # another text: planned
    assert counted == {"parse": 3, "plan": 3}


# (query, parameter sets): each set answers from the cache as a fresh plan answers it.
CASES = [
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name AS n ORDER BY n",
        [{"s": "p02"}, {"s": "p05"}, {"s": "nobody"}],
    ),
    (
        "MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN count(b)",  # on the adjacency
        [{"s": "p02"}, {"s": "p04"}],
    ),
    (
        "MATCH (p:Person) WHERE p.age > $x AND p.score < $y RETURN p.name ORDER BY p.name",
        [{"x": 20, "y": 0.5}, {"x": 40, "y": 0.9}, {"x": 2**70, "y": 1.0}],
    ),
    (
        "MATCH (p:Person) WHERE p.born < $d OR p.city = $c RETURN p.name ORDER BY p.name",
        [{"d": dt.date(1990, 1, 1), "c": "Oslo"}, {"d": dt.date(2000, 1, 1), "c": None}],
    ),
    (
        "MATCH (p:Person) WHERE p.city IN $cities RETURN count(*) AS n",
        [{"cities": ["Oslo"]}, {"cities": ["Rome", "Lima"]}, {"cities": []}],
    ),
    (
        "MATCH (p:Person) RETURN p.name ORDER BY p.name SKIP $skip LIMIT $n",
        [{"n": 2, "skip": 0}, {"n": 3, "skip": 1}, {"n": 2, "skip": 0}],
    ),
    ("UNWIND $xs AS x RETURN x", [{"xs": [1, 2]}, {"xs": ["a"]}, {"xs": [1.5, None]}]),
    (
        "MATCH (p:Person) WHERE p.name =~ $re RETURN count(*) AS n",
        [{"re": "p0.*"}, {"re": "p1[0-4]"}],
    ),
    ("RETURN $b AS b, $m AS m", [{"b": True, "m": {"k": 1}}, {"b": False, "m": {"k": 2}}]),
]


@pytest.mark.parametrize(("q", "runs"), CASES)
def test_cached_plans_answer_as_fresh_ones(social, counted, q, runs):
    cached = [social.query(q, p).to_pylist() for p in runs]
    for p, rows in zip(runs, cached, strict=True):
        executor.PLANS.clear()
        assert social.query(q, p).to_pylist() == rows, p
    assert len({repr(r) for r in cached}) > 1  # the values changed the answer


def test_inlined_values_and_bad_values_are_planned_again(social, counted):
    q = "MATCH (p:Person) WHERE p.name =~ $re RETURN count(*) AS n"
    social.query(q, {"re": "p0.*"})
    with pytest.raises(CypherError, match="invalid regex"):  # checked, not rebound
        social.query(q, {"re": "(unclosed"})
    social.query(q, {"re": "p0.*"})
    assert counted["plan"] == 2
    limited = "MATCH (p:Person) RETURN p.name ORDER BY p.name LIMIT $n"
    assert social.query(limited, {"n": 1}).num_rows == 1
    with pytest.raises(CypherParameterError, match="non-negative"):
        social.query(limited, {"n": -1})
    assert social.query(limited, {"n": 3}).num_rows == 3
    typed = "MATCH (p:Person) WHERE p.age > $x RETURN count(*)"
    social.query(typed, {"x": 1})
    with pytest.raises(CypherTypeError):  # another type: planned, and refused
        social.query(typed, {"x": "old"})
    with pytest.raises(CypherParameterError):
        social.query(typed, {})
    with pytest.raises(CypherParameterError):  # not a plain value
        social.query(typed, {"x": object()})


def test_the_cache_is_bounded_and_keyed_by_schema_and_types(monkeypatch):
    schema = parse_schema(SCHEMA)
    calls = []

    def compile_(text, params):
        calls.append(text)
        return plan_query(parse_query(text), schema, dict(params))

    cache = plancache.PlanCache(entries=3)
    q = "MATCH (p:Person {name: $s}) RETURN p.age"

    def get(text, params, schema_id="s1"):
        return cache.plan(text, schema_id, params, lambda: compile_(text, params))

    a = get(q, {"s": "p01"})
    b = get(q, {"s": "p02"})
    assert len(calls) == 1 and b.arguments == {"s": "p02"}
    assert b.params == {"glp_0": "p02"} and a.params == {"glp_0": "p01"}
    get(q, {"s": "p02"}, schema_id="s2")  # another schema
    get(q, {"s": None})  # another type
    assert len(calls) == 3
    for i in range(4):
        get(f"RETURN {i} AS x", {})
    assert len(cache) == 3
    get(q, {"s": "p01"})  # evicted: planned again
    assert len(calls) == 8
    monkeypatch.setattr(plancache, "PLAN_CACHE_VARIANTS", 2)
    limited = "MATCH (p:Person) RETURN p.name LIMIT $n"
    for n in (1, 2, 3, 1):  # three variants of the inlined LIMIT, two kept
        get(limited, {"n": n})
    assert len(calls) == 12
    long = "RETURN 1 AS x" + " " * plancache.PLAN_CACHE_MAX_CHARS
    get(long, {})
    get(long, {})
    assert calls.count(long) == 2
    unwind = "UNWIND $xs AS x RETURN x"  # the list is inlined (its item type)
    big = list(range(plancache.PLAN_CACHE_MAX_CHARS))
    get(unwind, {"xs": big})
    get(unwind, {"xs": big})
    assert calls.count(unwind) == 2  # too long a key: not kept
    get(unwind, {"xs": [1]})
    assert get(unwind, {"xs": [1]}).arguments == {"xs": [1]} and calls.count(unwind) == 3


def test_kept_plans_hold_no_parameter_values():
    schema = parse_schema(SCHEMA)
    cache = plancache.PlanCache()
    q = "MATCH (p:Person) WHERE p.name IN $names RETURN p.age"
    names = [f"p{i}" for i in range(1000)]
    plan = cache.plan(
        q, "s", {"names": names}, lambda: plan_query(parse_query(q), schema, {"names": names})
    )
    assert plan.params == {"glp_0": names}  # the caller's plan has them
    kept = [p for e in cache._items.values() for p in e.plans.values()]
    assert len(kept) == 1 and kept[0].params == {} and kept[0].arguments == {}


def _parameterized(text: str) -> tuple[str, dict[str, object]]:
    """`text` with every string literal a parameter of the same value."""
    params: dict[str, object] = {}

    def to_param(m: re.Match) -> str:
        name = f"p{len(params)}"
        params[name] = m.group(1)
        return f"${name}"

    return re.sub(r"'([^'\\\\]*)'", to_param, text), params


def test_a_rebound_plan_equals_a_fresh_one_on_the_oracle_corpus():
    """Every query of the LadybugDB comparison with its string literals made parameters:
    planned with one set of values, then taken from the cache for another, the plan is
    equal, field for field, to one planned afresh for the other values."""
    schema = parse_schema(SCHEMA)
    corpus = queries.HAND + queries.generated(210) + queries.grouped(60) + queries.anchored(60)
    checked = 0
    for original, _ in corpus:
        text, first = _parameterized(original)
        if not first:
            continue
        other = {k: ("p03" if v != "Person" else v) for k, v in first.items()}
        try:
            plan_query(parse_query(text), schema, dict(first))
            fresh = plan_query(parse_query(text), schema, dict(other))
        except CypherError:  # a literal that cannot be a parameter (a label's name)
            continue
        cache = plancache.PlanCache()
        for params in (first, other):
            got = cache.plan(
                text,
                "s",
                params,
                lambda p=params, t=text: plan_query(parse_query(t), schema, dict(p)),
            )
        assert cache.hits == (0 if fresh.inlined else 1), text
        assert got == fresh, text
        checked += 1
    assert checked > 150
