"""The answers of the compiler corpus's queries, to hold a change of the SQL lowering
(issue 28: MATCH lowered from the logical plan's operators) to equal answers, not text.

    PYTHONPATH=old/src .venv/bin/python bench/lowering_answers.py run before.jsonl
    PYTHONPATH=new/src .venv/bin/python bench/lowering_answers.py run after.jsonl
    .venv/bin/python bench/lowering_answers.py compare before.jsonl after.jsonl

`run` loads the social graph (tests/query/social.py) and the traversal tests' graph, then
runs every case of bench/compiler_corpus.py on those two schemas that plans, recording
each step's SQL text, the answer as a multiset of normalized rows (and the rows in order
when the query has ORDER BY), or the error's class. `compare` counts the cases whose SQL
text changed and requires the same answers (multisets; the order too where the query
sorts, up to ties: a differing order is listed when the multisets agree).
"""

# ruff: noqa: E402  (imports after the path set-up)
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import compiler_corpus
import graphlake as gl
from graphlake.errors import GraphLakeError
from graphlake.query.parser import parse_query
from graphlake.query.planner import plan_query
from tests.query import test_traverse as traversals
from tests.query.conftest import load_social
from tests.query.test_oracle import multiset, normal

VOLATILE = ("date()", "datetime()", "localdatetime()", "localtime()", "time()", "timestamp()")
LIMITS = {"QueryTimeoutError", "QueryTooLargeError"}


def _trav(uri: str) -> gl.Graph:
    """tests/query/test_traverse.py's graph (its fixture `g`)."""
    rng = random.Random(7)
    names = traversals.NAMES
    g = gl.Graph.init(uri, traversals.SCHEMA)
    with g.write(message="seed") as w:
        w.insert(
            "P",
            [
                {
                    "name": n,
                    "age": rng.choice([None, 10, 30, 50]),
                    "score": rng.choice([None, 0.25, 0.75]),
                    "ok": rng.choice([None, True, False]),
                }
                for n in names
            ],
        )
        w.insert("C", [{"name": "c1"}, {"name": "c2"}])
        # The same edges as the fixture's, with ids of their own (not generated per run)
        k = [{"src": rng.choice(names), "dst": rng.choice(names)} for _ in range(36)]
        w.insert("K", [{"id": f"k{i:02d}", **e} for i, e in enumerate(k)])
        w.insert("K", [{"id": "k36", "src": "n03", "dst": "n03"}])
        c = [{"src": rng.choice(names), "dst": rng.choice(["c1", "c2"])} for _ in range(9)]
        w.insert("W", [{"id": f"w{i}", **e} for i, e in enumerate(c)])
    return g


def run(out: Path) -> None:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        graphs = {"social": load_social(f"{tmp}/social"), "trav": _trav(f"{tmp}/trav")}
        n = 0
        with out.open("w") as f:
            for text, schema, params in compiler_corpus.corpus():
                if schema not in graphs:
                    continue
                try:
                    plan = plan_query(parse_query(text), compiler_corpus.SCHEMAS[schema], params)
                except GraphLakeError:
                    continue
                sql = "\n".join(s.sql for s in plan.steps)
                rec: dict = {
                    "q": text,
                    "schema": schema,
                    "params": sorted(params),
                    "sql": hashlib.sha256(sql.encode()).hexdigest(),
                }
                try:
                    rows = [
                        list(r.values()) for r in graphs[schema].query(text, params).to_pylist()
                    ]
                    rec["rows"] = repr(multiset(rows))
                    if "ORDER BY" in text.upper():
                        rec["ordered"] = repr([tuple(normal(v) for v in r) for r in rows])
                except GraphLakeError as e:
                    rec["error"] = type(e).__name__
                f.write(json.dumps(rec) + "\n")
                n += 1
    took = time.perf_counter() - started
    print(f"{n} cases run in {took:.1f} s with {Path(gl.__file__).parent} -> {out}")


def compare(a: Path, b: Path) -> int:
    before = [json.loads(line) for line in a.read_text().splitlines()]
    after = [json.loads(line) for line in b.read_text().splitlines()]
    assert [(r["q"], r["schema"], r["params"]) for r in before] == [
        (r["q"], r["schema"], r["params"]) for r in after
    ], "not the same cases"
    sql_changed = sum(x["sql"] != y["sql"] for x, y in zip(before, after, strict=True))
    differ = [
        (x, y)
        for x, y in zip(before, after, strict=True)
        if (x.get("rows"), x.get("error")) != (y.get("rows"), y.get("error"))
    ]
    # Not the planner's doing: the clock (`date()`, ...), or a time or memory limit hit
    # on one side only (a loaded machine)
    volatile = [x["q"] for x, y in differ if any(w in x["q"].lower() for w in VOLATILE)]
    limits = [
        x["q"]
        for x, y in differ
        if x["q"] not in volatile and {x.get("error"), y.get("error")} & LIMITS
    ]
    answers = [x["q"] for x, _ in differ if x["q"] not in volatile + limits]
    order = [
        x["q"]
        for x, y in zip(before, after, strict=True)
        if x.get("ordered") != y.get("ordered") and x["q"] not in answers
    ]
    errors = sum("error" in x for x in before)
    print(
        f"{len(before)} cases ({errors} errors when run), SQL text changed in {sql_changed}; "
        f"answers differ in {len(answers)}; order (multisets equal) differs in {len(order)}; "
        f"clock-dependent answers differ in {len(volatile)}, a limit hit on one side in "
        f"{len(limits)}"
    )
    for q in limits:
        print("  limit hit:", q)
    for q in answers[:10]:
        print("  answer differs:", q)
    for q in order[:10]:
        print("  order differs:", q)
    return 1 if answers else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("run").add_argument("out", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.cmd == "run":
        run(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
