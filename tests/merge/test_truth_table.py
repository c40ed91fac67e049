"""The semantic oracle: every ordered pair of side operations, merged as (source, target).

Base graph: Persons A, B, C and the edge e1 A->B. A clean merge must equal "both sides'
changes applied" (a plain-Python model); a conflicting one must raise exactly the
expected conflict kinds and leave the target untouched. Values that both sides write
differ by side, so the same operation on both sides diverges unless it is value-free.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable

import pytest

import graphlake as gl
from tests.conftest import SOCIAL, state
from tests.merge.model import Model, person, rows

AGE = {"source": 11, "target": 22}
EMAIL = {"source": "c@source.org", "target": "c@target.org"}


BASE: Model = {
    "Person": {n: person(n) for n in "ABC"},
    "Company": {},
    "Knows": {"e1": {"id": "e1", "src": "A", "dst": "B", "since": None}},
    "WorksAt": {},
}

# Each operation: (apply to a graph branch, apply to the model).
Op = tuple[Callable[[gl.Graph, str, str], None], Callable[[Model, str], None]]


def _w(g: gl.Graph, branch: str, fn: Callable) -> None:
    with g.write(branch) as w:
        fn(w)


def _drop(model: Model, table: str, key: str) -> None:
    model[table].pop(key, None)


OPS: dict[str, Op] = {
    "noop": (lambda g, b, side: None, lambda m, side: None),
    "addNode": (
        lambda g, b, side: _w(
            g, b, lambda w: w.insert("Person", [{"name": "N", "age": AGE[side]}])
        ),
        lambda m, side: m["Person"].__setitem__("N", person("N", age=AGE[side])),
    ),
    "removeNode": (
        lambda g, b, side: _w(g, b, lambda w: w.delete("Person", ["C"])),
        lambda m, side: _drop(m, "Person", "C"),
    ),
    "addEdge": (
        lambda g, b, side: _w(
            g, b, lambda w: w.insert("Knows", [{"id": "e2", "src": "C", "dst": "B"}])
        ),
        lambda m, side: m["Knows"].__setitem__(
            "e2", {"id": "e2", "src": "C", "dst": "B", "since": None}
        ),
    ),
    "removeEdge": (
        lambda g, b, side: _w(g, b, lambda w: w.delete("Knows", ["e1"])),
        lambda m, side: _drop(m, "Knows", "e1"),
    ),
    "setProperty": (
        lambda g, b, side: _w(
            g, b, lambda w: w.update("Person", [{"name": "C", "age": AGE[side]}])
        ),
        lambda m, side: (
            m["Person"]["C"].__setitem__("age", AGE[side]) if "C" in m["Person"] else None
        ),
    ),
    "setOtherProperty": (
        lambda g, b, side: _w(
            g, b, lambda w: w.update("Person", [{"name": "C", "email": EMAIL[side]}])
        ),
        lambda m, side: (
            m["Person"]["C"].__setitem__("email", EMAIL[side]) if "C" in m["Person"] else None
        ),
    ),
    "netZero": (
        lambda g, b, side: (
            _w(g, b, lambda w: w.insert("Person", [{"name": "Z"}])),
            _w(g, b, lambda w: w.delete("Person", ["Z"])),
        ),
        lambda m, side: None,
    ),
    "removeNodeCascade": (
        lambda g, b, side: _w(g, b, lambda w: w.delete("Person", ["B"], cascade=True)),
        lambda m, side: (_drop(m, "Person", "B"), _drop(m, "Knows", "e1")),
    ),
}

# Unordered pairs that conflict, with the exact kinds; every other pair merges cleanly.
CONFLICTS: dict[frozenset[str], set[str]] = {
    frozenset({"addNode"}): {"divergent_insert"},
    frozenset({"setProperty"}): {"divergent_update"},
    frozenset({"setOtherProperty"}): {"divergent_update"},
    frozenset({"removeNode", "setProperty"}): {"delete_vs_update"},
    frozenset({"removeNode", "setOtherProperty"}): {"delete_vs_update"},
    frozenset({"removeNode", "addEdge"}): {"orphan_edge"},
    frozenset({"removeNodeCascade", "addEdge"}): {"orphan_edge"},
}

PAIRS = list(itertools.product(OPS, repeat=2))


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> str:
    """A seeded graph, copied per case (initialising Lance tables is the slow part)."""
    root = tmp_path_factory.mktemp("tt") / "base"
    g = gl.Graph.init(root, SOCIAL)
    with g.write(message="base") as w:
        w.insert("Person", [{"name": n} for n in "ABC"])
        w.insert("Knows", [{"id": "e1", "src": "A", "dst": "B"}])
    return str(root)


@pytest.mark.parametrize(("s_op", "t_op"), PAIRS, ids=[f"{s}-{t}" for s, t in PAIRS])
def test_pair(template: str, tmp_path, s_op: str, t_op: str) -> None:
    import shutil

    root = tmp_path / "g"
    shutil.copytree(template, root)
    g = gl.Graph.open(root)
    g.create_branch("source")
    g.create_branch("target")
    OPS[s_op][0](g, "source", "source")
    OPS[t_op][0](g, "target", "target")
    expected_kinds = CONFLICTS.get(frozenset({s_op, t_op}), set())
    if expected_kinds:
        before = state(g, "target")
        with pytest.raises(gl.MergeConflictError) as err:
            g.merge("source", into="target")
        assert {c.kind for c in err.value.conflicts} == expected_kinds
        assert all(c.table and c.entity_id and c.message for c in err.value.conflicts)
        assert state(g, "target") == before, "a conflicting merge changed the target"
        dry = g.merge("source", into="target", dry_run=True)
        assert dry.outcome == "conflict" and {c.kind for c in dry.conflicts} == expected_kinds
        assert state(g, "target") == before
        return
    model = copy.deepcopy(BASE)
    OPS[s_op][1](model, "source")
    OPS[t_op][1](model, "target")
    result = g.merge("source", into="target")
    assert rows(g, "target") == model
    if s_op == "noop":
        assert result.outcome == "already_up_to_date"
    elif t_op == "noop":
        assert result.outcome == "fast_forward"
        assert g.head("target").id == g.head("source").id
    else:
        # Sides that converged (the target unchanged) are still a recorded merge.
        assert result.outcome == "merged"
        parents = g.head("target").parents
        assert parents == (
            result.commit and g.repo.commits.get(result.commit).parents[0],
            g.head("source").id,
        )
    # The source branch is never changed by a merge into another branch.
    src_model = copy.deepcopy(BASE)
    OPS[s_op][1](src_model, "source")
    assert rows(g, "source") == src_model
