"""Validate a transaction's resolved plans against the schema and the branch head.

Every check is scoped to what the transaction writes or removes: keyed probes of the
head (through the BTREE indexes) for the touched keys, never a join of whole tables on
the common path.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import duckdb
import lance
import pyarrow as pa
import pyarrow.compute as pc

from graphlake.errors import (
    CardinalityError,
    MissingEndpointError,
    NodeHasEdgesError,
    UniqueViolationError,
    ValueConstraintError,
)
from graphlake.schema.model import EdgeType, NodeType, Schema, TableType
from graphlake.storage.lookup import rows_where_in
from graphlake.write.plan import TablePlan

DatasetFor = Callable[[str], lance.LanceDataset]


def validate(schema: Schema, plans: dict[str, TablePlan], dataset: DatasetFor) -> None:
    for plan in plans.values():
        check_values(plan.type, plan.written)
        check_unique(plan, dataset(plan.name))
    for plan in plans.values():
        if isinstance(plan.type, NodeType):
            check_no_dangling_edges(schema, plan, plans, dataset)
    for plan in plans.values():
        if isinstance(plan.type, EdgeType):
            check_endpoints(plan, plans, dataset)
            check_cardinality(plan, plans, dataset(plan.name))


# --- value constraints ------------------------------------------------------------------


def value_violations(t: TableType, rows: pa.Table) -> list[tuple[str, str, str]]:
    """(row id, property, message) for every enum, range and regex violation in `rows`."""
    out: list[tuple[str, str, str]] = []
    if rows.num_rows == 0:
        return out
    ids = rows.column("id")
    for prop in t.properties:
        if prop.name not in rows.column_names:
            continue
        col = rows.column(prop.name)
        enum_type = prop.type if prop.type.kind == "Enum" else prop.type.item
        if enum_type is not None and enum_type.kind == "Enum":
            out += _enum_violations(prop.name, col, ids, enum_type.values or (), prop.type.kind)
        rng = t.ranges.get(prop.name)
        if rng is not None:
            out += _range_violations(prop.name, col, ids, rng.min, rng.max)
        pattern = t.checks.get(prop.name)
        if pattern is not None:
            out += _regex_violations(prop.name, col, ids, pattern)
    return out


def check_values(t: TableType, rows: pa.Table) -> None:
    bad = value_violations(t, rows)
    if bad:
        shown = "; ".join(f"{key!r}: {msg}" for key, _, msg in bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise ValueConstraintError(f"{t.name}: {shown}{more}")


def _enum_violations(
    name: str, col: pa.ChunkedArray, ids: pa.ChunkedArray, values: tuple[str, ...], kind: str
) -> list[tuple[str, str, str]]:
    allowed = pa.array(list(values), type=pa.string())
    if kind == "List":
        out = []
        for key, items in zip(ids.to_pylist(), col.to_pylist(), strict=True):
            for item in items or ():
                if item is not None and item not in values:
                    out.append((key, name, f"{name} item {item!r} is not one of {list(values)}"))
        return out
    bad = pc.and_(pc.is_valid(col), pc.invert(pc.is_in(col, value_set=allowed)))
    return [
        (key, name, f"{name}={v!r} is not one of {list(values)}")
        for key, v in zip(ids.filter(bad).to_pylist(), col.filter(bad).to_pylist(), strict=True)
    ]


def _range_violations(
    name: str, col: pa.ChunkedArray, ids: pa.ChunkedArray, lo: Any, hi: Any
) -> list[tuple[str, str, str]]:
    bad = None
    if lo is not None:
        bad = pc.fill_null(pc.less(col, pa.scalar(lo).cast(col.type)), False)
    if hi is not None:
        above = pc.fill_null(pc.greater(col, pa.scalar(hi).cast(col.type)), False)
        bad = above if bad is None else pc.or_(bad, above)
    if bad is None or not pc.any(bad).as_py():
        return []
    shown = f"{'' if lo is None else lo}..{'' if hi is None else hi}"
    return [
        (key, name, f"{name}={v!r} is outside @range({shown})")
        for key, v in zip(ids.filter(bad).to_pylist(), col.filter(bad).to_pylist(), strict=True)
    ]


def _regex_violations(
    name: str, col: pa.ChunkedArray, ids: pa.ChunkedArray, pattern: str
) -> list[tuple[str, str, str]]:
    rx = re.compile(pattern)
    if len(col) >= _VECTOR_MIN_ROWS:
        # Only rows the vectorised (RE2) test cannot vouch for reach Python's `re`.
        unsure = _regex_unsure(col, pattern)
        if unsure is not None:
            ids, col = ids.filter(unsure), col.filter(unsure)
    return [
        (key, name, f"{name}={v!r} does not match @check({pattern!r})")
        for key, v in zip(ids.to_pylist(), col.to_pylist(), strict=True)
        if v is not None and rx.fullmatch(v) is None
    ]


# Below this many rows the plain Python loops are cheaper than the vectorised checks.
_VECTOR_MIN_ROWS = 1024
# A pattern in this subset means the same under Python's `re` and RE2 on ASCII text:
# printable ASCII; escapes only of punctuation; no `(?...)` groups, anchors (`$`, `^`
# outside a class negation), POSIX classes, set-operation look-alikes or possessive
# quantifiers; braces only as `{m}`, `{m,}`, `{m,n}`.
_RE2_UNSAFE = re.compile(r"\\[A-Za-z0-9]|\(\?|\$|\[:|&&|\|\||~~|--|[*+?}]\+|[^\x20-\x7e]")
_BRACES = re.compile(r"\{[0-9]+(,[0-9]*)?\}")


def _re2_equivalent(pattern: str) -> bool:
    if _RE2_UNSAFE.search(pattern):
        return False
    rest = _BRACES.sub("", pattern)
    if "{" in rest or "}" in rest:
        return False
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c in "[^":  # a nested class, or `^` other than a leading negation
                return False
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":  # a leading `]` is a literal in `re`
                return False
        elif c == "^":
            return False
        i += 1
    return not in_class


def _regex_unsure(col: pa.ChunkedArray, pattern: str) -> pa.ChunkedArray | None:
    """Mask of rows RE2 does not prove to fully match `pattern` (None: no fast path).

    Exact by construction: a row outside the mask is ASCII and fully matched by RE2 under
    a pattern whose meaning RE2 and `re` share; everything else is left to `re`.
    """
    if not _re2_equivalent(pattern):
        return None
    try:
        matched = pc.match_substring_regex(col, f"^(?:{pattern})$")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None  # a pattern (or type) RE2 does not take: Python checks every row
    sure = pc.and_(pc.fill_null(matched, False), pc.fill_null(pc.string_is_ascii(col), False))
    return pc.invert(sure)


# --- uniqueness -------------------------------------------------------------------------


def check_unique(plan: TablePlan, ds: lance.LanceDataset) -> None:
    written = plan.written
    if written.num_rows == 0:
        return
    gone: set[str] | None = None
    for cols in plan.type.uniques:
        if _no_unique_clash(plan, ds, written, cols):
            continue
        if gone is None:
            gone = set(plan.removed_ids)
        tuples = [
            tuple(r) for r in zip(*(written.column(c).to_pylist() for c in cols), strict=True)
        ]
        keys = written.column("id").to_pylist()
        seen: dict[tuple, str] = {}
        clashes: list[str] = []
        for key, tup in zip(keys, tuples, strict=True):
            if any(v is None for v in tup):
                continue  # nulls never collide (SQL semantics)
            if tup in seen:
                clashes.append(f"{_fmt(cols, tup)} on {seen[tup]!r} and {key!r}")
            seen[tup] = key
        if seen and not plan.delete_all:
            head = rows_where_in(ds, cols[0], [t[0] for t in seen], ["id", *cols])
            for r in head.to_pylist():
                tup = tuple(r[c] for c in cols)
                if tup in seen and r["id"] not in gone and r["id"] != seen[tup]:
                    clashes.append(f"{_fmt(cols, tup)} on {r['id']!r} and {seen[tup]!r}")
        if clashes:
            more = f" (and {len(clashes) - 5} more)" if len(clashes) > 5 else ""
            raise UniqueViolationError(
                f"{plan.name}: @unique({', '.join(cols)}) violated: "
                f"{'; '.join(clashes[:5])}{more}"
            )


def _no_unique_clash(
    plan: TablePlan, ds: lance.LanceDataset, written: pa.Table, cols: tuple[str, ...]
) -> bool:
    """True when a vectorised test proves `cols` has no clash; False: run the exact check.

    For large writes only, and only for types whose Arrow equality is Python's (strings,
    integers, booleans, dates, timestamps): the within-write test counts distinct tuples,
    the head test matches head rows to written rows by value.
    """
    if written.num_rows < _VECTOR_MIN_ROWS:
        return False
    if not all(_exact_equality(written.schema.field(c).type) for c in cols):
        return False
    try:
        valid, distinct = count_distinct(written, list(cols))
        if valid == 0:
            return True
        if distinct != valid:
            return False
        if plan.delete_all:
            return True
        # Null tuples never clash; below, a null key matches nothing (index_in, join).
        sub = written.select(["id", *cols])
        first = sub.column(cols[0]).combine_chunks()
        head = rows_where_in(ds, cols[0], first, ["id", *cols])
        head = head.filter(_all_valid(head, cols))
        if head.num_rows == 0:
            return True
        if len(cols) == 1:
            at = pc.index_in(head.column(cols[0]), value_set=first)
            head_ids = head.column("id")
            writer_ids = sub.column("id").take(at)
        else:
            writers = sub.rename_columns(["__writer_id", *cols])
            joined = head.select(["id", *cols]).join(writers, keys=list(cols),
                                                     join_type="inner")
            head_ids, writer_ids = joined.column("id"), joined.column("__writer_id")
        removed = pa.chunked_array(
            [*plan.deleted_old.column("id").chunks, *plan.updated_old.column("id").chunks],
            type=pa.string(),
        ).combine_chunks()
        clash = pc.and_kleene(
            pc.is_valid(writer_ids),
            pc.and_kleene(
                pc.invert(pc.is_in(head_ids, value_set=removed)),
                pc.not_equal(head_ids, writer_ids),
            ),
        )
        return not pc.any(clash).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False


# From this many rows, count distinct values with DuckDB (hashes on every core; Arrow's
# `unique` is single-threaded and took ~2x as long on 1M strings on 2 cores).
_DISTINCT_SQL_MIN_ROWS = 100_000
_duck_lock = threading.Lock()
_duck: duckdb.DuckDBPyConnection | None = None


def count_distinct(table: pa.Table, cols: list[str]) -> tuple[int, int]:
    """(rows of `table` without a null in `cols`, distinct `cols` tuples among them)."""
    sub = table.select(cols).rename_columns([f"c{i}" for i in range(len(cols))])
    names = sub.column_names
    if sub.num_rows >= _DISTINCT_SQL_MIN_ROWS:
        global _duck
        with _duck_lock:
            if _duck is None:
                _duck = duckdb.connect()
            cur = _duck.cursor()
        try:
            cur.register("t", sub)
            where = " AND ".join(f"{c} IS NOT NULL" for c in names)
            row = cur.execute(
                f"SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT {', '.join(names)} "
                f"FROM t WHERE {where})) FROM t WHERE {where}"
            ).fetchone()
            return int(row[0]), int(row[1])
        except duckdb.Error:
            pass  # a type DuckDB does not take: count with Arrow below
        finally:
            cur.close()
    sub = sub.filter(_all_valid(sub, tuple(names)))
    if len(names) == 1:
        return sub.num_rows, len(pc.unique(sub.column(0)))
    return sub.num_rows, sub.group_by(names).aggregate([]).num_rows


def _exact_equality(t: pa.DataType) -> bool:
    return (
        pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
        or pa.types.is_boolean(t) or pa.types.is_date(t) or pa.types.is_timestamp(t)
    )


def _all_valid(table: pa.Table, cols: tuple[str, ...]) -> pa.ChunkedArray:
    mask = pc.is_valid(table.column(cols[0]))
    for c in cols[1:]:
        mask = pc.and_(mask, pc.is_valid(table.column(c)))
    return mask


def _fmt(cols: tuple[str, ...], tup: tuple) -> str:
    return ", ".join(f"{c}={v!r}" for c, v in zip(cols, tup, strict=True))


# --- graph integrity --------------------------------------------------------------------


def _node_exists(
    node_type: str, keys: set[str], plans: dict[str, TablePlan], dataset: DatasetFor
) -> set[str]:
    """Which of `keys` are nodes of `node_type` after the transaction."""
    plan = plans.get(node_type)
    present: set[str] = set()
    rest = set(keys)
    if plan is not None:
        written = set(plan.written.column("id").to_pylist())
        present |= rest & written
        rest -= written
        rest -= plan.deleted_ids
        if plan.delete_all:
            rest = set()
    if rest:
        head = rows_where_in(dataset(node_type), "id", sorted(rest), ["id"])
        present |= set(head.column("id").to_pylist())
    return present


def check_endpoints(plan: TablePlan, plans: dict[str, TablePlan], dataset: DatasetFor) -> None:
    t = plan.type
    assert isinstance(t, EdgeType)
    written = plan.written
    if written.num_rows == 0:
        return
    missing: list[str] = []
    for column, node_type in (("src", t.src), ("dst", t.dst)):
        keys = set(pc.unique(written.column(column)).to_pylist())
        absent = keys - _node_exists(node_type, keys, plans, dataset)
        missing += [f"{column} {node_type} {k!r}" for k in sorted(absent)]
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise MissingEndpointError(
            f"{t.name}: edges point at nodes that do not exist: {', '.join(missing[:5])}{more}"
        )


def edges_touching(
    t: EdgeType, node_type: str, keys: list[str], ds: lance.LanceDataset
) -> pa.Table:
    """Head edges of `t` whose src or dst (of `node_type`) is one of `keys`."""
    parts = []
    for column, end in (("src", t.src), ("dst", t.dst)):
        if end == node_type and keys:
            parts.append(rows_where_in(ds, column, keys))
    if not parts:
        return ds.schema.empty_table()
    table = pa.concat_tables(parts)
    _, first = _first_of_each(table.column("id").to_pylist())
    return table.take(pa.array(first, type=pa.int64()))


def _first_of_each(keys: list[str]) -> tuple[set[str], list[int]]:
    seen: set[str] = set()
    first = []
    for i, k in enumerate(keys):
        if k not in seen:
            seen.add(k)
            first.append(i)
    return seen, first


def check_no_dangling_edges(
    schema: Schema, plan: TablePlan, plans: dict[str, TablePlan], dataset: DatasetFor
) -> None:
    deleted = sorted(plan.deleted_ids)
    if not deleted:
        return
    for et in schema.edges_touching(plan.name):
        edge_plan = plans.get(et.name)
        if edge_plan is not None and edge_plan.delete_all:
            continue
        head = edges_touching(et, plan.name, deleted, dataset(et.name))
        gone = set(edge_plan.removed_ids) if edge_plan else set()
        left = [r for r in head.to_pylist() if r["id"] not in gone]
        if left:
            shown = ", ".join(f"{r['src']!r}->{r['dst']!r}" for r in left[:5])
            raise NodeHasEdgesError(
                f"{plan.name}: cannot delete nodes that still have {et.name} edges "
                f"({shown}{' …' if len(left) > 5 else ''}); delete with cascade=True to "
                f"remove those edges too"
            )


def check_cardinality(
    plan: TablePlan, plans: dict[str, TablePlan], ds: lance.LanceDataset
) -> None:
    t = plan.type
    assert isinstance(t, EdgeType)
    if t.card is None:
        return
    affected = set(plan.written.column("src").to_pylist())
    affected |= set(plan.deleted_old.column("src").to_pylist())
    src_plan = plans.get(t.src)
    if t.card.min > 0 and src_plan is not None:
        affected |= src_plan.inserted_ids
    if src_plan is not None:
        affected -= src_plan.deleted_ids  # a deleted node has no edges to count
    if not affected:
        return
    counts: Counter[str] = Counter()
    if not plan.delete_all:
        gone = set(plan.removed_ids)
        head = rows_where_in(ds, "src", sorted(affected), ["id", "src"])
        for key, src in zip(head.column("id").to_pylist(), head.column("src").to_pylist(),
                            strict=True):
            if key not in gone:
                counts[src] += 1
    for src in plan.written.column("src").to_pylist():
        counts[src] += 1
    lo, hi = t.card.min, t.card.max
    bad = [
        (src, counts[src]) for src in sorted(affected)
        if counts[src] < lo or (hi is not None and counts[src] > hi)
    ]
    if bad:
        shown = ", ".join(f"{s!r} has {n}" for s, n in bad[:5])
        bounds = f"{lo}..{'' if hi is None else hi}"
        raise CardinalityError(
            f"{t.name}: @card({bounds}) per {t.src} violated: {shown}"
            f"{' …' if len(bad) > 5 else ''}"
        )
