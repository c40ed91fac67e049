"""One set of coercion rules for dicts, JSONL, pandas and Arrow (issue 14, item 7).

Values must have their property's type on every path; Arrow columns may differ in width
or layout only. `coerce=True` (on `w.insert/upsert/update/overwrite` and `g.load`) casts
with Arrow's safe casts.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from graphlake import Graph
from graphlake.errors import TypeMismatchError

SCHEMA = """
node Item { name: String @key  label: String?  price: F64?  qty: I32?  v: Vector(2)? }
"""


@pytest.fixture()
def g(tmp_path: Path) -> Graph:
    return Graph.init(tmp_path / "g", SCHEMA)


WRONG = [
    pytest.param({"name": ["a"], "label": [6]}, "Item.label", "int64", id="int-for-string"),
    pytest.param({"name": ["a"], "price": ["3.5"]}, "Item.price", "string", id="text-for-float"),
    pytest.param({"name": ["a"], "qty": [3.0]}, "Item.qty", "double", id="float-for-int"),
    pytest.param({"name": ["a"], "qty": [True]}, "Item.qty", "bool", id="bool-for-int"),
]


@pytest.mark.parametrize("columns,where,arrow_type", WRONG)
@pytest.mark.parametrize("container", ["arrow", "pandas"])
def test_a_column_of_the_wrong_type_is_refused(
    g: Graph, columns: dict, where: str, arrow_type: str, container: str
) -> None:
    rows = pa.table(columns) if container == "arrow" else pd.DataFrame(columns)
    head = g.head().id
    with pytest.raises(TypeMismatchError) as info, g.write() as w:
        w.insert("Item", rows)
    message = str(info.value)
    assert where in message and arrow_type in message and "coerce=True" in message
    assert g.head().id == head


@pytest.mark.parametrize("columns,where,arrow_type", WRONG)
def test_dicts_refuse_the_same_values(g: Graph, columns: dict, where: str, arrow_type: str) -> None:
    row = {k: v[0] for k, v in columns.items()}
    with pytest.raises(TypeMismatchError, match=where.replace(".", r"\.")), g.write() as w:
        w.insert("Item", [row])


def test_load_of_arrow_is_strict(g: Graph) -> None:
    with pytest.raises(TypeMismatchError, match=r"Item\.label"):
        g.load(pa.table({"name": ["a"], "label": [6]}), table="Item")
    assert g.nodes("Item").num_rows == 0


def test_width_and_layout_may_differ(g: Graph) -> None:
    """pandas gives int64 and list<double>; both fit an I32 and a Vector(2) as is."""
    frame = pd.DataFrame({"name": ["a"], "qty": [3], "price": [2], "v": [[1.0, 2.0]]})
    with g.write() as w:
        w.insert("Item", frame)
    assert g.get("Item", "a") == {
        "id": "a",
        "name": "a",
        "label": None,
        "price": 2.0,
        "qty": 3,
        "v": [1.0, 2.0],
    }


@pytest.mark.parametrize("container", ["dicts", "arrow", "pandas"])
def test_coerce_casts_safely(g: Graph, container: str) -> None:
    columns = {"name": ["a"], "label": [6], "price": ["3.5"], "qty": [4.0]}
    rows: object = {
        "dicts": [{k: v[0] for k, v in columns.items()}],
        "arrow": pa.table(columns),
        "pandas": pd.DataFrame(columns),
    }[container]
    with g.write() as w:
        w.insert("Item", rows, coerce=True)
    row = g.get("Item", "a")
    assert row is not None
    assert (row["label"], row["price"], row["qty"]) == ("6", 3.5, 4)


def test_coerce_refuses_a_lossy_cast(g: Graph) -> None:
    with pytest.raises(TypeMismatchError, match=r"Item\.qty"), g.write() as w:
        w.insert("Item", pa.table({"name": ["a"], "qty": [3.5]}), coerce=True)


def test_load_coerce_casts(g: Graph) -> None:
    g.load(pa.table({"name": ["a"], "label": [6]}), table="Item", coerce=True)
    assert g.get("Item", "a")["label"] == "6"  # type: ignore[index]


def test_update_and_upsert_take_coerce(g: Graph) -> None:
    with g.write() as w:
        w.insert("Item", [{"name": "a"}])
    with pytest.raises(TypeMismatchError), g.write() as w:
        w.update("Item", pa.table({"name": ["a"], "price": ["1.5"]}))
    with g.write() as w:
        w.update("Item", pa.table({"name": ["a"], "price": ["1.5"]}), coerce=True)
        w.upsert("Item", pa.table({"name": ["b"], "qty": [2.0]}), coerce=True)
    assert g.get("Item", "a")["price"] == 1.5  # type: ignore[index]
    assert g.get("Item", "b")["qty"] == 2  # type: ignore[index]
