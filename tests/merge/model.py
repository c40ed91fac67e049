"""A plain-Python model of graph states and of the merge rules (the oracle's reference).

A graph state is `{table: {key: row}}` with rows as `Snapshot.read` returns them (node
rows carry `id` and their key property, edge rows `id`, `src`, `dst`). The merge model is
written from DESIGN.md ("Merge semantics"), not from `graphlake.merge`: per key, an
unchanged side takes the other, equal changes converge, insert vs different insert is
`divergent_insert`, delete vs update `delete_vs_update`, update vs update merges cell by
cell against the base (a cell both sides set differently is `divergent_update`). N
sources are first combined by the same rules (a disagreement between sources is a
conflict, never resolved by a strategy), then merged against the target. The merged
result is then checked for orphan edges, `@unique` clashes and `@card` overflows.

Where a key conflicts (unresolved), the result keeps the target's row: the constraint
checks of a conflicting merge are judged on that provisional result, as graphlake does.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import graphlake as gl

Row = dict[str, Any]
Model = dict[str, dict[str, Row]]

TABLES = ("Person", "Company", "Knows", "WorksAt")
NODE_KEY = {"Person": "name", "Company": "name"}
NODE_COLUMNS = {
    "Person": ("id", "name", "age", "email", "role"),
    "Company": ("id", "name", "founded"),
}
EDGE_COLUMNS = {"Knows": ("id", "src", "dst", "since"), "WorksAt": ("id", "src", "dst")}
# Edge type -> (source node type, destination node type).
ENDPOINTS = {"Knows": ("Person", "Person"), "WorksAt": ("Person", "Company")}
UNIQUE = {"Person": ("email",)}  # SOCIAL: email is @unique
CARD_MAX = {"WorksAt": 1}  # SOCIAL: WorksAt @card(0..1)


def person(name: str, **kw: Any) -> Row:
    return {"id": name, "name": name, "age": None, "email": None, "role": None, **kw}


def node_row(table: str, key: str, props: dict[str, Any]) -> Row:
    row: Row = dict.fromkeys(NODE_COLUMNS[table])
    row.update(props)
    row["id"] = row[NODE_KEY[table]] = key
    return row


def edge_row(table: str, key: str, props: dict[str, Any]) -> Row:
    row: Row = dict.fromkeys(EDGE_COLUMNS[table])
    row.update(props)
    row["id"] = key
    return row


def empty() -> Model:
    return {t: {} for t in TABLES}


def rows(g: gl.Graph, branch: str) -> Model:
    """What a branch shows, as a model."""
    snap = g.snapshot(branch)
    return {t: {r["id"]: r for r in snap.read(t).to_pylist()} for t in TABLES}


# --- validity of one state ----------------------------------------------------------------


def violations(m: Model) -> set[tuple[str, str, str]]:
    """(kind, table, entity) for every constraint the state breaks. Unique clashes are
    named by the clashing value (`("unique_violation", "Person", "email=…")`)."""
    out: set[tuple[str, str, str]] = set()
    for et, (src_t, dst_t) in ENDPOINTS.items():
        for key, r in m[et].items():
            if r["src"] not in m[src_t] or r["dst"] not in m[dst_t]:
                out.add(("orphan_edge", et, key))
    for table, cols in UNIQUE.items():
        counts = Counter(
            tuple(r[c] for c in cols)
            for r in m[table].values()
            if all(r[c] is not None for c in cols)
        )
        for values, n in counts.items():
            if n > 1:
                out.add(("unique_violation", table, unique_name(cols, values)))
    for et, hi in CARD_MAX.items():
        counts = Counter(r["src"] for r in m[et].values())
        for src, n in counts.items():
            if n > hi:
                out.add(("cardinality_violation", et, src))
    return out


def unique_name(cols: tuple[str, ...], values: tuple) -> str:
    return ",".join(f"{c}={v}" for c, v in zip(cols, values, strict=True))


def touching(m: Model, table: str, key: str) -> list[tuple[str, str]]:
    """(edge table, edge id) of every edge with `key` (of node `table`) as an endpoint."""
    return [
        (et, eid)
        for et, (src_t, dst_t) in ENDPOINTS.items()
        for eid, r in m[et].items()
        if (src_t == table and r["src"] == key) or (dst_t == table and r["dst"] == key)
    ]


# --- the per-key rules ----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyOutcome:
    row: Row | None  # the key's row in the result (the target's when unresolved)
    kind: str | None = None  # the data conflict, if any
    resolved: bool = False


def three_way(
    b: Row | None, s: Row | None, t: Row | None, strategy: str | None = None
) -> KeyOutcome:
    """One key, three images (None = absent)."""
    if s in (t, b):
        return KeyOutcome(t)
    if t == b:
        return KeyOutcome(s)
    if b is None:
        return _decide("divergent_insert", s, t, strategy)
    if s is None or t is None:
        return _decide("delete_vs_update", s, t, strategy)
    ours, theirs, clash = dict(t), dict(t), False
    for name in t:
        bv, sv, tv = b.get(name), s.get(name), t.get(name)
        if sv in (tv, bv):
            continue
        if tv == bv:
            ours[name] = theirs[name] = sv
        else:
            theirs[name] = sv
            clash = True
    if not clash:
        return KeyOutcome(ours)
    if strategy is None:
        return KeyOutcome(t, "divergent_update")
    return KeyOutcome(ours if strategy == "ours" else theirs, "divergent_update", True)


def _decide(kind: str, s: Row | None, t: Row | None, strategy: str | None) -> KeyOutcome:
    if strategy is None:
        return KeyOutcome(t, kind)
    return KeyOutcome(t if strategy == "ours" else s, kind, True)


# --- a whole merge ------------------------------------------------------------------------------


@dataclass
class Expected:
    """What a merge of `sources` into a target should do."""

    outcome: str  # already_up_to_date | fast_forward | merged | conflict | refused
    result: Model  # the target's rows afterwards (the target's own when it fails)
    conflicts: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, table, key)
    resolved: set[tuple[str, str, str]] = field(default_factory=set)
    overlap: set[tuple[str, str]] = field(default_factory=set)  # strict_disjoint refusals
    # The result with every unresolved key at the target's row: what constraint
    # conflicts are judged on (and what names a unique clash's value).
    provisional: Model = field(default_factory=dict)


def merge(
    base: Model,
    sources: list[Model],
    target: Model,
    *,
    source_moved: list[bool],
    target_moved: bool,
    strategy: str | None = None,
    strict_disjoint: bool = False,
    bases: list[Model] | None = None,
    base_ranks: list[int] | None = None,
) -> Expected:
    """The model of `merge` (one source) and `merge_many` (several) into the target.

    `source_moved[i]` / `target_moved`: whether that branch has commits since the base
    (a branch whose writes all netted to nothing has none).

    `bases` / `base_ranks`: each source's own base (the target's commit it forked from or
    last merged) and that commit's rank, when the sources forked from different commits
    of a linear target history (`base` then serves none; `target_moved` is about the one
    pending source's base). Sources with one rank share a base. A key one group of
    sources changed is decided against that group's base; a key two groups changed is a
    conflict between them unless their rows are equal, which the newest base decides."""
    if bases is None:
        bases, base_ranks = [base] * len(sources), [0] * len(sources)
    assert base_ranks is not None
    moved = [i for i, m in enumerate(source_moved) if m]
    if not moved:
        return Expected("already_up_to_date", target)
    if not target_moved and len(moved) == 1:
        return Expected("fast_forward", sources[moved[0]])
    groups: dict[int, list[int]] = {}
    for i in moved:
        groups.setdefault(base_ranks[i], []).append(i)
    if strict_disjoint:
        overlap = {
            (t, k)
            for t in TABLES
            for k, n in Counter(
                k for i in moved for k in _changed(bases[i][t], sources[i][t])
            ).items()
            if n > 1
        }
        if overlap:
            return Expected("refused", target, overlap=overlap)
    result: Model = copy.deepcopy(target)
    conflicts: set[tuple[str, str, str]] = set()
    resolved: set[tuple[str, str, str]] = set()
    for table in TABLES:
        keys = set(target[table]) | {k for i in moved for k in bases[i][table]}
        keys |= {k for i in moved for k in sources[i][table]}
        for key in sorted(keys):
            t = target[table].get(key)
            images, clashes = [], set()
            for rank, members in groups.items():
                b = bases[members[0]][table].get(key)
                own = [sources[i][table].get(key) for i in members]
                if all(s == b for s in own):
                    continue
                combined, kinds = _combine(own, b)
                clashes |= kinds
                images.append((rank, b, combined))
            if clashes:
                conflicts |= {(kind, table, key) for kind in clashes}
                continue  # the target keeps its row
            if not images:
                continue
            between = {_between(images[0], im) for im in images[1:] if im[2] != images[0][2]}
            if between:
                conflicts |= {(kind, table, key) for kind in between}
                continue
            _, b, combined = max(images, key=lambda im: im[0])  # the newest base decides
            out = three_way(b, combined, t, strategy)
            if out.kind is not None:
                (resolved if out.resolved else conflicts).add((out.kind, table, key))
            _put(result[table], key, out.row)
    conflicts |= violations(result)
    if conflicts:
        return Expected("conflict", target, conflicts, resolved, provisional=result)
    # A pending source has commits the target lacks: the merge is recorded even when
    # nothing changes (result == target).
    return Expected("merged", result, resolved=resolved, provisional=result)


def _between(a: tuple, b: tuple) -> str:
    """The kind of conflict between two groups' images (rank, base row, row)."""
    (_, a_base, a_row), (_, b_base, b_row) = a, b
    if a_row is None or b_row is None:
        return "delete_vs_update"
    return "divergent_insert" if a_base is None and b_base is None else "divergent_update"


def _changed(base: dict[str, Row], side: dict[str, Row]) -> set[str]:
    return {k for k in set(base) | set(side) if base.get(k) != side.get(k)}


def _combine(images: list[Row | None], b: Row | None) -> tuple[Row | None, set[str]]:
    """The sources' combined image of one key; the kinds of any disagreement."""
    acc, clashes = b, set()
    for s in images:
        out = three_way(b, s, acc)
        if out.kind is not None:
            clashes.add(out.kind)
        else:
            acc = out.row
    return acc, clashes


def _put(rows_of: dict[str, Row], key: str, row: Row | None) -> None:
    if row is None:
        rows_of.pop(key, None)
    else:
        rows_of[key] = row
