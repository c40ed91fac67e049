"""The SQL text the Cypher compiler writes for a corpus of queries, to compare two trees
byte for byte (a refactoring of the compiler must not change one character).

    PYTHONPATH=src .venv/bin/python bench/sql_corpus.py OUT.txt

The corpus: the LadybugDB comparison's queries (tests/query/queries.py: HAND,
generated(210), grouped(60), anchored(60), bound(80)), the traversal, logical-plan,
shortest-path and CALL tests' queries and every Cypher string literal of tests/query and
tests/algo/test_cypher_call.py, each planned against the five schemas those tests use
(`plan_query`: no storage). Per plan it writes the statement, each step (its CTE, its
row count and the statement up to it), the seeds, prefetches, path searches and calls,
the traversal, and the first MATCH's `on_bindings()` plan; per failing plan its error.
It prints the counts and the output's SHA-1. Run it on both trees, then `cmp` the files.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' corpus

from graphlake.query import data_checks
from graphlake.query.parser import parse_query
from graphlake.query.planner import Plan, plan_query
from graphlake.schema.parser import parse_schema
from tests.algo import test_cypher_call as calls
from tests.query import queries, social
from tests.query import test_logical_plans as logical
from tests.query import test_pathsearch as pathsearch
from tests.query import test_query as query
from tests.query import test_traverse as traversals

ROOT = Path(__file__).resolve().parents[1]
CYPHER = re.compile(r"^\s*(OPTIONAL MATCH|MATCH|UNWIND|CALL|WITH|RETURN)\b")
SKIP = {"test_sql_in_one_place.py", "test_sqlgen.py"}  # their strings are no queries


def texts() -> list[str]:
    out = [
        q
        for q, _ in queries.HAND
        + queries.generated(210)
        + queries.grouped(60)
        + queries.anchored(60)
        + queries.bound(80)
    ]
    out += traversals.QUERIES + traversals.UNANCHORED + [t for t, _ in logical.GOLDEN]
    out += logical.SHORTEST + query.SHORTEST + query.ANCHORED
    files = [f for f in sorted((ROOT / "tests/query").glob("*.py")) if f.name not in SKIP]
    for f in [*files, ROOT / "tests/algo/test_cypher_call.py"]:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out += [node.value] if CYPHER.match(node.value) else []
    for shape in pathsearch.SHAPES:
        for a, b in pathsearch.PAIRS:
            ends = f"(a:Person {{name: '{a}'}}){shape}(b:Person {{name: '{b}'}})"
            out.append(f"MATCH p = shortestPath({ends}) RETURN p")
            out.append(
                f"MATCH (a:Person {{name: '{a}'}}), (b:Person {{name: '{b}'}}) "
                f"MATCH p = shortestPath((a){shape}(b)) RETURN length(p)"
            )
    return list(dict.fromkeys(out))


def steps(plan: Plan) -> list[str]:
    return [
        f"  step {s.name} {s.kind} {s.what!r} key={s.key} exec={s.executor}\n"
        f"    sql: {s.sql}\n    def: {s.definition()}\n    count: {s.counting_sql()}\n"
        f"    until: {plan.sql_until(i)}"
        for i, s in enumerate(plan.steps)
    ]


def report(plan: Plan) -> list[str]:
    out = [
        f"sql: {plan.sql}",
        f"tables: {sorted(plan.tables)} columns: {plan.columns} "
        f"params: {sorted(plan.params.items(), key=str)}",
        *steps(plan),
    ]
    for s in plan.seeds:
        out.append(
            f"  seed {s.frontier} {sorted(s.tables)} {s.lookup!r}\n    sql: {s.sql}\n"
            f"    params: {sorted(plan.params_of(s.sql))}"
        )
    out += [f"  prefetch {p!r}" for p in plan.prefetch]
    for p in plan.searches:
        out.append(f"  search {p!r}")
        out.append(f"  searched-sql-len {len(plan.with_step_sql(p.cte, 'SELECT 1', 'csr').sql)}")
    out += [f"  call {c!r}" for c in plan.calls]
    out.append(f"  traversal: {plan.traversal!r}")
    if plan.csr_match is not None:
        bound = plan.on_bindings()
        out.append(f"  csr_match step={plan.csr_match.step} sql: {plan.csr_match.sql}")
        out.append(f"  on_bindings sql: {bound.sql}\n  ob tables: {sorted(bound.tables)}")
        out += steps(bound)
    return out


def main(target: str) -> None:
    schemas = {
        "social": parse_schema(social.SCHEMA),
        "trav": parse_schema(traversals.SCHEMA),
        "loops": parse_schema(query.LOOPS),
        "call": parse_schema(calls.SCHEMA),
        "fan": parse_schema(pathsearch.FAN),
    }
    params = {**queries.PARAMS, **logical.PARAMS, "none": None}
    out: list[str] = []
    corpus = texts()
    planned = failed = 0
    for text in corpus:
        for name, schema in schemas.items():
            out.append(f"=== [{name}] {text}")
            given = dict(params, s="n01") if name == "trav" else dict(params)
            try:
                plan = plan_query(parse_query(text), schema, given)
            except Exception as exc:  # the error is part of the output
                failed += 1
                out.append(f"ERROR {type(exc).__name__}: {exc}")
                continue
            planned += 1
            out += report(plan)
    for sql in ["SELECT 1", "SELECT * FROM Person -- c", "select id from Person where age > 3"]:
        out.append(f"bounded: {data_checks._bounded_sql(sql)}")
    text = "\n".join(out) + "\n"
    Path(target).write_text(text)
    digest = hashlib.sha1(text.encode()).hexdigest()
    print(
        f"{len(corpus)} texts, {planned} plans, {failed} errors, {len(text)} chars, sha1 {digest}"
    )


if __name__ == "__main__":
    main(sys.argv[1])
