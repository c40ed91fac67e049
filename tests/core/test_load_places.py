"""Load errors name their place, and CSV loads (issue 23, item 8): a bad value on line
3,778 of a JSONL file says `big.jsonl:3778: Person 'B3777': age: ...`; a `.csv` file
loads through pyarrow's CSV reader with the same strict typing and `coerce=True`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.errors import DataError, TypeMismatchError

SCHEMA = """
node Person { name: String @key  age: I32?  born: Date? }
edge Knows: Person -> Person { since: Date? }
"""


def test_a_bad_jsonl_value_names_file_line_and_row(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    lines = [
        json.dumps({"type": "Person", "data": {"name": f"B{i}", "age": i}}) for i in range(9000)
    ]
    lines[3777] = json.dumps({"type": "Person", "data": {"name": "B3777", "age": "x"}})
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join(lines) + "\n")
    with pytest.raises(TypeMismatchError) as info:
        g.load(big)
    assert str(info.value) == f"{big}:3778: Person 'B3777': age: expected I32, got 'x'"
    edge = {"edge": "Knows", "from": "B1", "to": "B2", "data": {"since": "nope"}}
    big.write_text("\n".join([*lines[:3777], json.dumps(edge)]) + "\n")
    with pytest.raises(TypeMismatchError, match=r"big\.jsonl:3778: Knows 'B1' -> 'B2': since:"):
        g.load(big)
    assert g.nodes("Person").num_rows == 0  # nothing was written


def test_csv_loads_with_strict_types_and_coerce(tmp_path: Path) -> None:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    people = tmp_path / "people.csv"
    people.write_text("name,age,born\nAnn,3,2020-01-02\nBo,,\n")
    g.load(people, table="Person")
    assert g.get("Person", "Ann")["age"] == 3 and g.get("Person", "Bo")["born"] is None
    people.write_text("name,age\nCy,x\n")
    with pytest.raises(TypeMismatchError, match=r"Person\.age: expected I32"):
        g.load(people, table="Person")
    with pytest.raises(DataError, match=r"people\.csv needs a table"):
        g.load(people)
    people.write_text("name,age\nCy,7\n")
    g.load(people, table="Person", coerce=True)
    assert g.get("Person", "Cy")["age"] == 7
