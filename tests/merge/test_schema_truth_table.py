"""The truth table extended with schema operations (issue 13): each schema operation
against a data operation on the other side (both directions), and the schema pairs that
matter. A clean merge must equal "both sides' changes applied" (rows, then columns); a
conflicting one raises exactly the expected kinds and leaves the target untouched."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable

import pytest

import graphlake as gl
from tests.conftest import state
from tests.merge.conftest import SCHEMA_BASE_PG, Rows, person_rows, schema_graph

BASE_PG = SCHEMA_BASE_PG
AGE = {"source": 11, "target": 22}
BASE: Rows = {n: {"id": n, "name": n, "age": None, "email": None} for n in "ABC"}

# Schema operations: (the .pg text, the change to model rows).
SCHEMA: dict[str, tuple[str, Callable[[Rows], None]]] = {
    "addProp": (
        BASE_PG.replace("email: String?", "email: String?  nick: String?"),
        lambda m: [r.setdefault("nick", None) for r in m.values()],
    ),
    "dropProp": (
        BASE_PG.replace("age: I32?", ""),
        lambda m: [r.pop("age", None) for r in m.values()],
    ),
    "renameProp": (
        BASE_PG.replace("age: I32?", "years: I32? @renamed_from(age)"),
        lambda m: [r.__setitem__("years", r.pop("age")) for r in m.values()],
    ),
    "retypeProp": (BASE_PG.replace("age: I32?", "age: I64?"), lambda m: None),
    "addConstraint": (
        BASE_PG.replace("node Person {", "node Person @unique(email) {"),
        lambda m: None,
    ),
}


def _set_age(g: gl.Graph, branch: str, side: str) -> None:
    with g.write(branch) as w:
        w.update("Person", [{"name": "C", "age": AGE[side]}])


def _remove(g: gl.Graph, branch: str, side: str) -> None:
    with g.write(branch) as w:
        w.delete("Person", ["B"])


# Data operations: (apply to a branch, apply to model rows in the base layout).
DATA: dict[str, tuple[Callable[[gl.Graph, str, str], None], Callable[[Rows, str], None]]] = {
    "setProperty": (_set_age, lambda m, side: m["C"].__setitem__("age", AGE[side])),
    "removeNode": (_remove, lambda m, side: m.pop("B")),
}

CASES = [
    (s, d, schema_side)
    for s, d, schema_side in itertools.product(SCHEMA, DATA, ("source", "target"))
]
# Schema pairs (source, target): the expected conflict kinds (empty: merges cleanly).
PAIRS: dict[tuple[str, str], set[str]] = {
    ("dropProp", "renameProp"): {"schema_conflict"},
    ("retypeProp", "dropProp"): {"schema_conflict"},
    ("renameProp", "retypeProp"): set(),
    ("addProp", "addProp"): set(),
    ("addConstraint", "dropProp"): set(),
}


@pytest.mark.parametrize(
    ("schema_op", "data_op", "schema_side"),
    CASES,
    ids=[f"{s}-{d}-on-{side}" for s, d, side in CASES],
)
def test_schema_against_data(
    schema_template: str, tmp_path, schema_op: str, data_op: str, schema_side: str
) -> None:
    g = schema_graph(schema_template, tmp_path)
    data_side = "target" if schema_side == "source" else "source"
    g.apply_schema(SCHEMA[schema_op][0], schema_side)
    DATA[data_op][0](g, data_side, data_side)
    model = copy.deepcopy(BASE)
    DATA[data_op][1](model, data_side)
    SCHEMA[schema_op][1](model)
    r = g.merge("source", into="target")
    assert person_rows(g, "target") == model
    if schema_op == "dropProp" and data_op == "setProperty":
        assert r.stats["Person"].dropped_values["age"]["values"] == {"C": AGE[data_side]}


@pytest.mark.parametrize(("s_op", "t_op"), list(PAIRS), ids=[f"{s}-{t}" for s, t in PAIRS])
def test_schema_pairs(schema_template: str, tmp_path, s_op: str, t_op: str) -> None:
    g = schema_graph(schema_template, tmp_path)
    g.apply_schema(SCHEMA[s_op][0], "source")
    g.apply_schema(SCHEMA[t_op][0], "target")
    expected = PAIRS[(s_op, t_op)]
    if expected:
        before = state(g, "target")
        with pytest.raises(gl.MergeConflictError) as err:
            g.merge("source", into="target")
        assert {c.kind for c in err.value.conflicts} == expected
        assert state(g, "target") == before
        return
    model = copy.deepcopy(BASE)
    SCHEMA[t_op][1](model)
    if s_op != t_op:
        SCHEMA[s_op][1](model)
    g.merge("source", into="target")
    assert person_rows(g, "target") == model
