"""graphlake's Cypher against LadybugDB on the same generated social graph: result
multisets of the hand-written queries (every construct) and of generated ones.

Ladybug runs in a subprocess (`ladybug_runner.py`), all queries in one batch, so its
native library never shares a process with DuckDB and Lance.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.query.queries import HAND, PARAMS, anchored, bound, generated, grouped
from tests.query.social import social_rows

if importlib.util.find_spec("ladybug") is None:  # looked up, never imported: it runs
    pytest.skip("ladybug is not installed", allow_module_level=True)  # in a subprocess

GENERATED = generated(210)
GROUPED = grouped(60)  # node and relationship variables kept by an aggregating WITH
ANCHORED = anchored(60)  # the shape the adjacency executor runs (query/traverse.py)
BOUND = bound(80)  # a first MATCH on the adjacency, the rest in DuckDB (test_bindings)
ALL = HAND + GENERATED + GROUPED + ANCHORED + BOUND


def _iso(value):
    return value.isoformat() if isinstance(value, dt.date) else value


@pytest.fixture(scope="module")
def oracle() -> list[dict]:
    rows = {t: [{k: _iso(v) for k, v in r.items()} for r in rs] for t, rs in social_rows().items()}
    job = {"rows": rows, "queries": [lb for _, lb in ALL], "params": PARAMS}
    runner = Path(__file__).with_name("ladybug_runner.py")
    done = subprocess.run(
        [sys.executable, str(runner)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)["results"]


def normal(value):
    """One spelling per value: numbers rounded, dates as ISO text, lists as tuples."""
    if isinstance(value, decimal.Decimal):
        value = int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return round(float(value), 6)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return tuple(sorted((normal(v) for v in value), key=repr))
    return value


def multiset(rows: list[list]) -> list:
    return sorted((tuple(normal(v) for v in r) for r in rows), key=repr)


def _graphlake_rows(g, text: str) -> list[list]:
    table = g.query(text, PARAMS)
    return [list(r.values()) for r in table.to_pylist()]


def _check(social, oracle, index: int) -> None:
    text, _ = ALL[index]
    expected = oracle[index]
    assert "error" not in expected, f"oracle failed on {ALL[index][1]!r}: {expected['error']}"
    got = multiset(_graphlake_rows(social, text))
    assert got == multiset(expected["rows"]), text


@pytest.mark.parametrize("index", range(len(HAND)), ids=[q for q, _ in HAND])
def test_hand_written(social, oracle, index):
    _check(social, oracle, index)


def _check_all(social, oracle, start: int, stop: int) -> None:
    """Queries start..stop in one test (one failure report lists every mismatch)."""
    bad = []
    for i in range(start, stop):
        text = ALL[i][0]
        try:
            _check(social, oracle, i)
        except AssertionError as exc:
            bad.append(f"{text}: {str(exc).splitlines()[0][:300]}")
    assert not bad, f"{len(bad)} of {stop - start} differ:\n" + "\n".join(bad[:20])


@pytest.mark.slow  # over 10 s: outside `make test-fast`
def test_generated(social, oracle):
    _check_all(social, oracle, len(HAND), len(HAND) + len(GENERATED))


def test_grouped_by_a_node_or_relationship(social, oracle):
    start = len(HAND) + len(GENERATED)
    _check_all(social, oracle, start, start + len(GROUPED))


def test_anchored_traversals_on_the_adjacency(social, oracle):
    start = len(ALL) - len(BOUND) - len(ANCHORED)
    _check_all(social, oracle, start, start + len(ANCHORED))


def test_first_match_on_the_adjacency_rest_in_duckdb(social, oracle):
    _check_all(social, oracle, len(ALL) - len(BOUND), len(ALL))


def test_enough_queries():
    assert len(ALL) >= 300
