"""Every observable of the Cypher compiler over a corpus, to hold a refactoring of it to
byte-identical output (issue 28: the binder, the SQL generator).

    .venv/bin/python bench/compiler_corpus.py dump before.jsonl   # on the old tree
    .venv/bin/python bench/compiler_corpus.py dump after.jsonl    # on the new one
    .venv/bin/python bench/compiler_corpus.py compare before.jsonl after.jsonl
    .venv/bin/python bench/compiler_corpus.py time                # compile time

The corpus: the ~480 queries tests/query/test_logical_plans.py builds (queries.HAND,
generated, grouped, anchored, the traversal tests' and its golden and shortestPath
queries) and queries.bound(60), each with its schema and parameters; `EXTRA` below (each
typing rule and each error, several errors in one query, on the social schema with two
parameter sets); and every string constant of tests/query/*.py that looks like a query,
on each test schema, with many parameters and with none (most fail: a name the schema
lacks, a missing parameter; the error and its position are the observable). Per case
it records each plan step's name, kind, description and SQL, the tables, columns,
seeds, prefetches, path searches, prepared and inlined parameters, traversal, CALLs and
the logical plan's text; or the error's class, message, line and column. `dump` also
writes, next to the file, the types of the logical plan's `Typed` expressions
(`*.types.jsonl`), which `compare` does not hold equal (a stage may type better).
"""

# ruff: noqa: E402, E501  (imports after the path set-up; EXTRA: one query a line)
from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import load_average, machine
from graphlake.errors import GraphLakeError
from graphlake.query import logical
from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from graphlake.schema.parser import parse_schema
from tests.query import queries, social
from tests.query import test_logical_plans as golden
from tests.query import test_query as query_tests
from tests.query import test_query_vectors as vectors
from tests.query import test_traverse as traversals

SCHEMAS = {
    "social": parse_schema(social.SCHEMA),
    "trav": parse_schema(traversals.SCHEMA),
    "loops": parse_schema(query_tests.LOOPS),
    "vec": parse_schema(vectors.SCHEMA),
}
MANY = {
    **golden.PARAMS,
    **queries.PARAMS,
    "none": None,
    "d": dt.date(2024, 1, 2),
    "v": [1.0, 2.0, 3.0],
    "m": {"a": 1},
    "f": 1.5,
    "b": True,
    "x": 1,
    "k": "p01",
    "name": "p01",
}
WORDS = ("MATCH", "RETURN", "UNWIND", "WITH ", "CALL ")

# Each typing rule and each error of the compiler, and several errors in one query.
EXTRA = r"""MATCH (a:Person) RETURN a.age + 1, a.age / 2, a.score / 2, a.age * a.score, a.age ^ 2, a.age % 3
MATCH (a:Person) RETURN a.name + 1, a.name + a.age, [1] + [2], [1] + a.age
MATCH (a:Person) RETURN a.name - 1
MATCH (a:Person) RETURN 1 - 'x'
MATCH (a:Person) RETURN -a.name
MATCH (a:Person) RETURN -a.age, +a.score, NOT a.age
MATCH (a:Person) WHERE a.age RETURN a
MATCH (a:Person) WHERE a.name = 1 RETURN a
MATCH (a:Person) WHERE a.name < a.age RETURN a
MATCH (a:Person), (b:Person) WHERE a = b AND a <> b RETURN a.name
MATCH (a:Person)-[r:Knows]->(b) WHERE r = r RETURN a = b, r <> r
MATCH (a:Person) WHERE a = 1 RETURN a
MATCH (a:Person) WHERE a.name STARTS WITH 'p' AND a.name ENDS WITH '1' AND a.name CONTAINS '0' RETURN a
MATCH (a:Person) WHERE a.age STARTS WITH 'p' RETURN a
MATCH (a:Person) WHERE a.name CONTAINS 1 RETURN a
MATCH (a:Person) WHERE a.name =~ 'p(' RETURN a
MATCH (a:Person) WHERE a.name =~ $re RETURN a
MATCH (a:Person) WHERE a.name =~ a.city RETURN a
MATCH (a:Person) WHERE a.age IN [1, 2, 3] AND a.name IN $names AND a.city IN [] RETURN a
MATCH (a:Person) WHERE a.age IN [1, 'x'] RETURN a
MATCH (a:Person) WHERE a.age IN a.name RETURN a
MATCH (a:Person) WHERE a.age IN $age RETURN a
MATCH (a:Person) RETURN CASE WHEN a.age > 3 THEN 'x' ELSE 'y' END AS c, CASE a.age WHEN 1 THEN 2 WHEN 2 THEN 3.5 END AS d
MATCH (a:Person) RETURN CASE WHEN a.age THEN 1 END
MATCH (a:Person) RETURN CASE WHEN a.age > 1 THEN 1 ELSE 'x' END + 1 AS z
MATCH (a:Person) RETURN [a.age, a.name][0], a.name[0], $names[1], [1,2][a.age], [1][a.name]
MATCH (a:Person) RETURN [1,2]['x'], a.age[0]
MATCH (a:Person) RETURN [1,2][1.5]
MATCH (a:Person) RETURN {k: a.age, j: 'x'} AS m, {} AS e, {k: 1}.k AS kk
MATCH (a:Person) RETURN a.name.x
MATCH (a:Person) RETURN a.born.year, a.born.month + 1, date().day, datetime().hour, a.born.week
MATCH (a:Person) WITH a.born AS b RETURN b.year, b.foo
MATCH (a:Person) WITH {x: 1} AS m RETURN m.x, m.x.y
MATCH (a:Person) WITH [a] AS l UNWIND l AS x RETURN x, x.name
UNWIND [1, 2, 3] AS x RETURN x + 1, x / 2
UNWIND ['a', 'b'] AS x RETURN x + 1
UNWIND [1, 'a'] AS x RETURN x
UNWIND $names AS x RETURN x + 'y'
UNWIND $age AS x RETURN x
UNWIND 5 AS x RETURN x
UNWIND [1] AS x UNWIND [2] AS x RETURN x
MATCH (a:Person) UNWIND [1] AS a RETURN a
MATCH (a:Person) RETURN count(*), count(a), count(DISTINCT a.city), sum(a.age), sum(a.score), avg(a.age), min(a.name), max(a.age), collect(a), collect(DISTINCT a.name)
MATCH (a:Person) RETURN sum(a.name)
MATCH (a:Person) RETURN avg(a.city)
MATCH (a:Person) RETURN sum(*)
MATCH (a:Person) RETURN count(count(a))
MATCH (a:Person) WHERE count(a) > 1 RETURN a
MATCH (a:Person) RETURN count(a, a)
MATCH (a:Person) RETURN toUpper(a.age), toLower(a.name), trim(a.name), replace(a.name, 'a', 'b'), left(a.name, 2), split(a.name, 'x'), toString(a.age), toInteger(a.name), toFloat(a.age), toBoolean('true'), abs(a.age), abs(a.score), ceil(a.score), floor(1), round(2.5), sign(a.age), sqrt(4), exp(1), log(2), log10(3), rand(), head([1]), last([1]), tail([1]), timestamp()
MATCH (a:Person) RETURN toupper(a.name, 1)
MATCH (a:Person) RETURN nosuch(a.name)
MATCH (a:Person) RETURN touper(a.name)
MATCH (a:Person) RETURN toUpper(DISTINCT a.name)
MATCH (a:Person) RETURN date('2024-01-01'), datetime('2024-01-01T00:00:00'), date(), datetime()
MATCH (a:Person) RETURN date(1, 2)
MATCH (a:Person)-[r:Knows]->(b) RETURN id(a), id(r), labels(a), type(r), startNode(r), endNode(r)
MATCH (a:Person) RETURN labels(a.name)
MATCH (a:Person)-[r:Knows]->(b) RETURN type(a)
MATCH (a:Person) RETURN id(1)
MATCH p = (a:Person)-[:Knows]->(b) RETURN nodes(p), relationships(p), length(p), length(a.name), length([1]), size(a.name), size([1,2])
MATCH (a:Person)-[r:Knows*1..2]->(b) RETURN length(r), size(r)
MATCH (a:Person) RETURN length(a.age)
MATCH (a:Person) RETURN size(a.age)
MATCH (a:Person) RETURN nodes(a)
MATCH (a:Person) RETURN coalesce(a.age, 1), coalesce(a.age, a.score), coalesce(a.name, 1)
MATCH (a:Person) RETURN coalesce()
MATCH (a:Person) RETURN substring(a.name, 1), substring(a.name, 1, 2), range(1, 3), range(1, 10, 2), exists(a.age)
MATCH (a:Person) RETURN substring(a.name)
MATCH (a:Person) RETURN range(1)
MATCH (a:Person) RETURN exists(a.age, 1)
MATCH (a:Person) RETURN vector_distance([1.0, 2.0], [2.0, 3.0]), vector_distance([1.0], [2.0], 'l2'), vector_distance([1.0], [2.0], 'dot')
MATCH (a:Person) RETURN vector_distance([1.0], [2.0], 'foo')
MATCH (a:Person) RETURN vector_distance([1.0])
MATCH (a:Person) RETURN a.nosuch
MATCH (a:Person) RETURN a.nme
MATCH (a:Person) RETURN b.name
MATCH (a:Person) RETURN aa.name
MATCH (a:Person) RETURN $nosuch
MATCH (a:Person) WHERE a.age > $age AND a.name = $s AND a.born = $d RETURN a.name, $f, $b, $m, $v, $none
MATCH (a:Person) RETURN $m.a, $v[0], $names[0] + 'x'
MATCH (a:Person) RETURN a.name AS x, a.age AS x
MATCH (a:Person) WITH a.name RETURN 1
MATCH (a:Person) WITH a.name AS n RETURN a
MATCH (a:Person) WITH a.name AS n, a RETURN n + 1, a.age + 1
MATCH (a:Person) WITH a, count(*) AS c WHERE c > 1 RETURN a.name, c + 1.5
MATCH (a:Person) WITH a, count(*) AS c WHERE c = 'x' RETURN a.name
MATCH (a:Person) WITH DISTINCT a.city AS c RETURN c ORDER BY c
MATCH (a:Person) RETURN a.name AS n ORDER BY a.age, n, a.name
MATCH (a:Person) RETURN a.name AS n, count(*) AS c ORDER BY c DESC, n, count(*) + 1, sum(a.age)
MATCH (a:Person) RETURN DISTINCT a.name AS n ORDER BY n, a.age
MATCH (a:Person) RETURN a.name AS n ORDER BY a.age + 'x'
MATCH (a:Person) RETURN a.name AS n ORDER BY nn
MATCH (a:Person) RETURN a.age / 2 AS h ORDER BY a.age / 2 DESC
MATCH (a:Person) RETURN a.name AS a ORDER BY a
MATCH (a:Person) RETURN a.name AS a ORDER BY a.name
MATCH (a:Person) RETURN a.age AS a ORDER BY a + 1
MATCH (a:Person) RETURN a.name ORDER BY exists((a)-[:Knows]->()) DESC
MATCH (a:Person) RETURN a.name AS n ORDER BY exists((a)-[:Knows]->()) AND n = 'x'
MATCH (a:Person) RETURN count(*) AS c ORDER BY a.name
MATCH (a:Person) RETURN * ORDER BY a.name
MATCH (a:Person) WITH * RETURN a.name
UNWIND [1] AS x WITH * , x + 1 AS y RETURN *
RETURN *
RETURN 1 AS x SKIP 1 LIMIT 2
RETURN 1 AS x LIMIT -1
RETURN 1 AS x LIMIT 1.5
RETURN 1 AS x LIMIT $n
RETURN 1 AS x LIMIT $s
RETURN 1 AS x SKIP 1 + 1
RETURN 1 AS x LIMIT $names
MATCH (a:Person) RETURN a LIMIT 1 RETURN a
MATCH (a:Person)
MATCH (a:Person) WITH a
MATCH (a:Person)-[:Knows]->(a:Company) RETURN a
MATCH (a:Person)-[a:Knows]->(b) RETURN a
MATCH (a:Person)-[r:Knows]->(b), (c)-[r:Knows]->(d) RETURN a
MATCH (a:Person)-[r:Knows]->(b) MATCH (a)-[r]->(b) RETURN a
MATCH (a:Person)-[r:Knows]->(b) MATCH (r) RETURN a
MATCH p = (a:Person)-[:Knows]->(b), p = (c)-->(d) RETURN p
MATCH (a:Person {name: 1}) RETURN a
MATCH (a:Person {nosuch: 1}) RETURN a
MATCH (a:Person {name: b.name}), (b:Person) RETURN a
MATCH (a:Person), (b:Person {name: a.name}) RETURN a
MATCH (a:Person)-[r:Knows {since: 'x'}]->(b) RETURN a
MATCH (a:Person)-[r:Knows {since: 1, weight: 2}]->(b) RETURN a
MATCH (a:Person)-[r:Knows]->(b {name: r.since}) RETURN a
MATCH (a:Person {name: count(*)}) RETURN a
MATCH (a:Person {name: exists((a)-->())}) RETURN a
MATCH (a:Persn) RETURN a
MATCH (a:Knows) RETURN a
MATCH (a)-[:Person]->(b) RETURN a
MATCH (a)-[:Knws]->(b) RETURN a
MATCH (a:Person)-[:Knows*1..20]->(b) RETURN a
MATCH (a:Person)-[:Knows*3..2]->(b) RETURN a
MATCH (a:Person)-[:Knows*1..2 {since: 1}]->(b) RETURN a
MATCH (a:Person)-[:Knows*..10]->(b)-[:Knows*..10]->(c)-[:Knows]->(d) RETURN a
MATCH (a:Person)-[:Knows*..10]->(b)-[:Knows*..10]->(c)-[:Knows]->(d:Nosuch) RETURN a
MATCH (a:Person) WHERE (a)-[:Knows*1..2]->() RETURN a
MATCH (a:Person) WHERE (a)-[:Knows]->(b) RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[r:Knows]->(b) WHERE r.since > 1 AND b.age > a.age } RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[r:Knows]->(b) WHERE r.since = 'x' } RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[r:Knows]->(b:Nosuch) } RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[r:Knows]->(b {age: 'x'}) } RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[r:Knows]->(b) WHERE EXISTS { (b)-[:Knows]->(c) WHERE c.age > a.age } } RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[:Knows]->(b) } AND b.age > 1 RETURN a
MATCH (a:Person) WHERE EXISTS { (a)-[:Knows]->(a) } RETURN a
MATCH (a:Person) RETURN exists((a)-[:Knows]->()) AS e, (a)-[:Knows]->() AS f
MATCH (a:Person) OPTIONAL MATCH (a)-[r:Knows]->(b) WHERE b.age > a.age RETURN a.name, b.name, r.since
MATCH (a:Person) OPTIONAL MATCH (a)-[r:Knows]->(b) WHERE b.age = 'x' RETURN a.name
OPTIONAL MATCH (a:Person) RETURN a.name
MATCH (a:Person) OPTIONAL MATCH (a)-[:Knows]->(b) WITH a, b MATCH (b)-[:Knows]->(c) RETURN c.name
MATCH (a:Person) OPTIONAL MATCH (a)-[:Knows]->(b) OPTIONAL MATCH (b)-[:WorksAt]->(c) RETURN a.name, b.name, c.name
MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..3]->(b:Person {name: $t})) RETURN p, length(p)
MATCH p = shortestPath((a:Person)-[:Knows*..3]->(b:Person)) RETURN p
MATCH p = shortestPath((a:Person {name: $s})-[:Knows*2..3]->(b:Person {name: $t})) RETURN p
MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..30]->(b:Person {name: $t})) RETURN p
MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..3 {since: 1}]->(b:Person {name: $t})) RETURN p
MATCH p = shortestPath((a:Person {name: $s})-[r:Knows*..3]->(b:Person {name: $t})) RETURN r, size(r), length(r)
MATCH p = shortestPath((a:Person {name: $s})-[:Knows*..3]->(b:Person {name: $t})-[:Knows]->(c)) RETURN p
MATCH (a:Person) WHERE shortestPath((a)-[:Knows*..3]->(b)) RETURN a
CALL pagerank('Knows') YIELD node, rank RETURN node.name, rank + 1, rank / 2
CALL pagerank('Knows') YIELD node AS n, rank AS r WHERE r > 0.1 AND n.age > 3 RETURN n.name, r
CALL pagerank('Knows') YIELD node AS n, rank AS r WHERE r = 'x' RETURN n
CALL wcc('Knows') YIELD node, component RETURN component + 1, component / 2
CALL pagerank('Knows')
CALL pagerank('Knows') YIELD nosuch RETURN 1
CALL nosuch('Knows') YIELD node RETURN node
CALL pagerank('Nosuch') YIELD node RETURN node
CALL pagerank('Person') YIELD node RETURN node
CALL pagerank() YIELD node RETURN node
CALL pagerank('Knows', {damping: 2.0}) YIELD node RETURN node
CALL pagerank('Knows', 3) YIELD node RETURN node
CALL pagerank($s) YIELD node RETURN node
CALL pagerank(a.name) YIELD node RETURN node
MATCH (node:Person) CALL pagerank('Knows') YIELD node RETURN node
MATCH (a:Person) CALL pagerank('Knows') YIELD node, rank WHERE node = a RETURN a.name, rank
CALL pagerank('Knows') YIELD node, rank MATCH (node)-[:Knows]->(b) RETURN b.name, rank
MATCH (a:Person) WHERE a.age > 'x' AND a.nosuch = 1 RETURN a
MATCH (a:Person) RETURN a.nosuch, b
MATCH (a:Nosuch) RETURN b
MATCH (a:Person) WHERE a.age > 'x' RETURN b
MATCH (a:Person)-[:Knows*1..20]->(b) RETURN a.nosuch
MATCH (a:Person)-[:Knows*1..20]->(b) WHERE a.age = 'x' RETURN a
MATCH (a:Person) WITH a.age AS x WHERE x > 'y' RETURN x LIMIT -1
MATCH (a:Person) RETURN a.age AS x LIMIT -1 ORDER BY nosuch
MATCH (a:Person) RETURN nosuch AS x LIMIT -1
MATCH (a:Person) RETURN a.name AS x ORDER BY nosuch LIMIT -1
RETURN 1 AS x LIMIT -1 RETURN 2
MATCH (a:Person)-[:Knows*3..2]->(b) WHERE a.age = 'x' RETURN a
MATCH (a:Person) UNWIND [1] AS a WITH a.x AS y RETURN y
MATCH (a:Person)-[:Knows]->(b) WITH a, b, a.age + b.age AS s UNWIND [s, 2] AS t RETURN a.name, t * 2
MATCH (a:Person) WITH a.age AS age WITH age / 2 AS h, age RETURN h + age, h =~ 'x'
WITH 1 AS one RETURN one + $age AS x, CASE WHEN $age > 10 THEN 'old' ELSE null END AS y
RETURN null + 1, null = 1, null IS NULL, 1 IS NOT NULL, 1 AND true
RETURN true XOR false, true OR 1
RETURN [1, 2, 3][-1], 'abc'[1]
MATCH (a:Person) WHERE a.born > date('2020-01-01') AND a.born < $d RETURN a.born.year
MATCH (a:Person) WHERE a.born > 1 RETURN a
MATCH (a:Person)-[r]->(b) RETURN r.since, r.role, r.src, r.dst, r.id, type(r)
MATCH (a)-[r]->(b) RETURN r.since + 1, a.name, a.founded
MATCH (a:Person|Company) RETURN a.city, a.founded, a.age
MATCH (a:Person|Company) WHERE a.age > 1 RETURN a.city
MATCH (a)-[:WorksAt]->(b) RETURN b.founded, a.age
MATCH (a)-[:WorksAt]->(b) RETURN b.age
MATCH (a:Person {name: $s})-[:Knows]->(b)-[:WorksAt]->(c) RETURN c.name
MATCH (a:Person {name: $s})-[:Knows]->(b {age: 3})-[:WorksAt]->(c {founded: $age}) RETURN c.name
MATCH (a:Person {name: $s, age: 'x'})-[:Knows]->(b) RETURN b
MATCH (a {name: $s})-[:Knows*1..3]->(b) WHERE a.age > 3 AND b.age < 9 RETURN b.name
MATCH (a)-[:Knows*1..3]->(b {name: $s}) WHERE b.age > 'x' RETURN a.name
MATCH (a)-[:Knows*1..3]-(b:Person {name: $s}) WHERE b.age / 2 > 1 RETURN a.name
MATCH (a:Person) WHERE a.age / 2 > 1 AND a.age * 1.5 < 3 AND a.score + a.age > 1 RETURN a
MATCH (a:Person {name: toUpper($s)})-[:Knows]->(b) RETURN b
MATCH (a:Person)-[:Knows]->(b) WHERE a.name = $s AND b = a RETURN b.name
MATCH (a:Person)-[:Knows]->(b) RETURN a.name, count(b) AS c, collect(b.name)[0] AS f ORDER BY c
MATCH (a:Person) RETURN a.name ORDER BY a.age SKIP $n LIMIT $n
MATCH (a:Person) RETURN a.name ORDER BY a.age SKIP $none
MATCH (a:Person) WITH a ORDER BY a.age LIMIT 3 WHERE a.age > 1 RETURN a.name
MATCH (a:Person) WITH a.name AS n ORDER BY a.age RETURN n
MATCH (a:Person) WITH a.name AS n, count(*) AS c ORDER BY a.age RETURN n
""".strip().splitlines()


def corpus() -> list[tuple[str, str, dict]]:
    """(query, schema name, parameters) of every case, in a fixed order."""
    out = []
    for text, schema, params in golden._corpus():
        out.append((text, "social" if schema is golden.SCHEMA else "trav", params))
    out += [(q, "social", queries.PARAMS) for q, _ in queries.bound(60)]
    for q in EXTRA:
        out += [(q, "social", MANY), (q, "social", golden.PARAMS)]
    texts = set()
    for path in sorted((ROOT / "tests" / "query").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and any(w in text.upper() for w in WORDS):
                texts.add(text)
    for text in sorted(texts):
        for schema in SCHEMAS:
            out += [(text, schema, MANY), (text, schema, {})]
    return out


def observed(text: str, schema: str, params: dict) -> tuple[dict, list[str]]:
    """What compiling the case shows: its plan or its error; and the logical types."""
    rec: dict = {"q": text, "schema": schema, "params": sorted(params)}
    try:
        plan = plan_query(parse_query(text), SCHEMAS[schema], dict(params))
    except GraphLakeError as e:
        line, column = getattr(e, "line", None), getattr(e, "column", None)
        rec["error"] = [type(e).__name__, str(e), line, column]
        return rec, []
    rec["plan"] = {
        "steps": [[s.name, s.kind, s.what, s.sql, list(s.key)] for s in plan.steps],
        "tables": sorted(plan.tables),
        "columns": list(plan.columns),
        "seeds": [repr(s) for s in plan.seeds],
        "prefetch": [repr(p) for p in plan.prefetch],
        "searches": [repr(p) for p in plan.searches],
        "params": repr(sorted(plan.params.items())),
        "bound_names": repr(sorted(plan.bound_names.items())),
        "inlined": sorted(plan.inlined),
        "logical": plan.logical.text() if plan.logical else None,
        "traversal": repr(plan.traversal),
        "csr_match": repr(plan.csr_match),
        "calls": repr(plan.calls),
    }
    return rec, _types(plan.logical.ops) if plan.logical else []


def _types(ops: tuple) -> list[str]:
    out = []
    for op in ops:
        for f in op.__dataclass_fields__:
            for x in _typed(getattr(op, f)):
                out.append(f"{type(op).__name__}.{f}: {x} :: {x.type}")
        if isinstance(op, logical.OptionalJoin):
            out += _types(op.ops)
    return out


def _typed(value: object) -> list[logical.Typed]:
    if isinstance(value, logical.Typed):
        return [value]
    if isinstance(value, tuple):
        return [t for v in value for t in _typed(v)]
    return []


def dump(path: Path) -> None:
    cases = corpus()
    failed = 0
    types_path = path.with_suffix(".types.jsonl")
    with path.open("w") as out, types_path.open("w") as types:
        for text, schema, params in cases:
            rec, typed = observed(text, schema, params)
            failed += "error" in rec
            out.write(json.dumps(rec, sort_keys=True, default=repr) + "\n")
            types.write(json.dumps({"q": text, "schema": schema, "types": typed}) + "\n")
    print(f"{len(cases)} cases: {len(cases) - failed} plans, {failed} errors -> {path}")


def compare(a: Path, b: Path, shown: int = 10) -> int:
    old = a.read_text().splitlines()
    new = b.read_text().splitlines()
    if len(old) != len(new):
        print(f"different corpora: {len(old)} and {len(new)} cases")
        return 1
    differ = [(x, y) for x, y in zip(old, new, strict=True) if x != y]
    for x, y in differ[:shown]:
        rx, ry = json.loads(x), json.loads(y)
        print(f"{rx['q']!r} on {rx['schema']} {rx['params']}")
        for key in sorted(set(rx) | set(ry)):
            if rx.get(key) != ry.get(key):
                print(
                    f"  {key}\n    before {str(rx.get(key))[:500]}\n    after  {str(ry.get(key))[:500]}"
                )
    print(f"{len(differ)} of {len(old)} cases differ")
    return 1 if differ else 0


def timing(reps: int) -> None:
    """Compile time of the corpus' cases that plan (parse cached: planning alone)."""
    cases = [c for c in corpus() if "plan" in observed(*c)[0]]
    runs = []
    for _ in range(reps):
        start = time.perf_counter()
        for text, schema, params in cases:
            plan_query(parse_query(text), SCHEMAS[schema], dict(params))
        runs.append(time.perf_counter() - start)
    per = statistics.median(runs) / len(cases) * 1e6
    print(f"{machine()}; load {load_average()}")
    print(
        f"{len(cases)} plans, median of {reps} runs: {statistics.median(runs):.3f} s, {per:.0f} us a plan"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("dump").add_argument("out", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    sub.add_parser("time").add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    if args.command == "dump":
        dump(args.out)
        return 0
    if args.command == "compare":
        return compare(args.before, args.after)
    timing(args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
