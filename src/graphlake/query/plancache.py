"""Plans of query texts run before: a repeated text skips parsing and planning.

A plan depends on the query text, the schema (its content id, `Commit.schema_id`: the
hash of the schema's text), each parameter's name and type (`param_signature`: Python
type, Cypher type, DuckDB cast, plainness) and the values of the few parameters the plan
inlines (`Plan.inlined`: numbers, booleans, dates and nulls written into the SQL as
literals, LIMIT and SKIP counts, regexes checked against the caps, UNWIND lists). The
other values are bound again on a hit (`Plan.rebound`): strings, lists and maps are
prepared parameters, a seed lookup reads its parameter when it runs, and an anchored
traversal takes its new anchor and constants (`Traversal.with_params`).

So `MATCH (a:Person {name: $s})-[:Knows]->(b) RETURN b.name` is planned once for every
start node. Bounded: `PLAN_CACHE_ENTRIES` (text, schema, signature) entries, least
recently used out first, each with at most `PLAN_CACHE_VARIANTS` plans for different
values of its inlined parameters; texts longer than `PLAN_CACHE_MAX_CHARS`, and plans
whose inlined values print longer than that, are not kept. A kept plan holds no
parameter values (a hit binds the caller's). Errors are not kept (a failing text is
planned, and fails, again).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping

from graphlake.query.checker import param_signature
from graphlake.query.planner import Plan

PLAN_CACHE_ENTRIES = 256
PLAN_CACHE_VARIANTS = 8
PLAN_CACHE_MAX_CHARS = 8_192


class _Entry:
    def __init__(self, inlined: frozenset[str]) -> None:
        self.inlined = inlined
        self.plans: OrderedDict[str, Plan] = OrderedDict()


class PlanCache:
    """Bounded, thread-safe; `hits` and `misses` count lookups (for tests and benches)."""

    def __init__(self, entries: int = PLAN_CACHE_ENTRIES) -> None:
        self.entries = entries
        self._items: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def plan(
        self,
        text: str,
        schema_id: str,
        params: Mapping[str, object],
        compile: Callable[[], Plan],
    ) -> Plan:
        """The plan of `text` with `params`: a cached one rebound to them, or `compile()`."""
        key = _key(text, schema_id, params)
        if key is not None:
            found = self._get(key, params)
            if found is not None:
                return found
        plan = compile()
        if key is not None:
            self._put(key, params, plan)
        return plan

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def _get(self, key: tuple, params: Mapping[str, object]) -> Plan | None:
        with self._lock:
            entry = self._items.get(key)
            plan = None
            if entry is not None:
                self._items.move_to_end(key)
                variant = _values(entry.inlined, params)
                plan = entry.plans.get(variant)
                if plan is not None:
                    entry.plans.move_to_end(variant)
        found = None if plan is None else plan.rebound(params)
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def _put(self, key: tuple, params: Mapping[str, object], plan: Plan) -> None:
        variant = _values(plan.inlined, params)
        if len(variant) > PLAN_CACHE_MAX_CHARS:  # a long inlined value (an UNWIND list)
            return
        # Kept without its parameter values (a hit binds the caller's): a large list
        # given once is not held by the cache.
        plan = dataclasses.replace(plan, params={}, arguments={})
        with self._lock:
            entry = self._items.get(key)
            if entry is None or entry.inlined != plan.inlined:
                entry = self._items[key] = _Entry(plan.inlined)
            self._items.move_to_end(key)
            entry.plans[variant] = plan
            while len(entry.plans) > PLAN_CACHE_VARIANTS:
                entry.plans.popitem(last=False)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)


def _key(text: str, schema_id: str, params: Mapping[str, object]) -> tuple | None:
    if len(text) > PLAN_CACHE_MAX_CHARS:
        return None
    signature = param_signature(params)
    return None if signature is None else (text, schema_id, signature)


def _values(names: frozenset[str], params: Mapping[str, object]) -> str:
    """The inlined parameters' values, as text that tells every plain value apart
    (the signature already fixed their types; `repr` tells 1 from 1.0 and True)."""
    return repr(sorted((name, repr(params.get(name))) for name in names))
