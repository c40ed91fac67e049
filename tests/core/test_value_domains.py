"""Values a property's type does not admit, on every write path (issue 12, items 11-13).

* NaN violates every `@range` (it compares false with both bounds, so it used to pass);
* `Vector(dim)` holds finite numbers only;
* `Date` / `DateTime` values outside 0001-01-01..9999-12-31 are refused (Arrow stores
  them, but no full read of the table could show them afterwards);
* `fsck` reports all three in a graph written without these checks;
* a `Blob` given as text is base64 everywhere (Python writes and every kind of load).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import graphlake as gl
from graphlake.constraints import check
from graphlake.write import coerce
from tests.conftest import state

SCHEMA = """
node M {
  k: String @key
  x: F64? @range(0..1)
  y: F32? @range(0..1)
  v: Vector(2)?
  d: Date?
  t: DateTime?
  ds: [Date]?
  b: Blob?
}
"""
NAN, INF = math.nan, math.inf
FAR_DAYS = 3_000_000  # days after 1970-01-01: year 10183
FAR_US = 2**62  # microseconds after 1970: year 17036


@pytest.fixture
def g(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    with g.write(message="seed") as w:
        w.insert("M", [{"k": "a", "x": 0.5, "v": [1.0, 2.0], "d": "2020-01-01"}])
    return g


Write = Callable[[gl.Graph, dict[str, Any]], object]


def _insert(g: gl.Graph, row: dict[str, Any]) -> None:
    with g.write() as w:
        w.insert("M", [{"k": "new", **row}])


def _upsert(g: gl.Graph, row: dict[str, Any]) -> None:
    with g.write() as w:
        w.upsert("M", [{"k": "a", **row}])


def _update(g: gl.Graph, row: dict[str, Any]) -> None:
    with g.write() as w:
        w.update("M", [{"k": "a", **row}])


def _load_records(g: gl.Graph, row: dict[str, Any]) -> None:
    g.load([{"type": "M", "data": {"k": "new", **row}}])


def _load_jsonl(g: gl.Graph, row: dict[str, Any]) -> None:
    path = Path(g.uri).parent / "in.jsonl"  # json.dumps writes NaN / Infinity literals
    path.write_text(json.dumps({"type": "M", "data": {"k": "new", **row}}) + "\n")
    g.load(path)


WRITES = [_insert, _upsert, _update, _load_records, _load_jsonl]


def _refused(g: gl.Graph, write: Write, row: dict[str, Any], match: str) -> None:
    before = state(g)
    with pytest.raises(gl.ValueConstraintError, match=match):
        write(g, row)
    assert state(g) == before


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("prop", ["x", "y"])
def test_nan_violates_every_range(g: gl.Graph, write: Write, prop: str) -> None:
    _refused(g, write, {prop: NAN}, rf"M: '(a|new)': {prop}=nan is outside @range")


def test_nan_violates_a_range_among_good_rows_and_from_arrow(g: gl.Graph) -> None:
    rows = pa.table({"k": ["p", "q", "r"], "x": [0.0, NAN, 1.0]})
    before = state(g)
    with pytest.raises(gl.ValueConstraintError, match=r"'q': x=nan"):
        g.load(rows, table="M")
    assert state(g) == before


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_vectors_refuse_nan_and_infinities(g: gl.Graph, write: Write, bad: float) -> None:
    _refused(g, write, {"v": [0.5, bad]}, r"M: '(a|new)': v holds NaN or an infinity")


def test_finite_vectors_and_nulls_pass(g: gl.Graph) -> None:
    with g.write() as w:
        w.insert("M", [{"k": "f", "v": [-1e30, 1e30]}, {"k": "n", "v": None}])
    assert g.get("M", "f")["v"] == [pytest.approx(-1e30), pytest.approx(1e30)]
    assert g.fsck().ok


FAR = [
    ("d", pa.array([FAR_DAYS], pa.date32()), r"d=10183-09-21 is outside the supported Date"),
    ("d", pa.array([-800_000], pa.date32()), "outside the supported Date range"),
    (
        "t",
        pa.array([FAR_US], pa.timestamp("us", tz="UTC")),
        r"t=17036-.* is outside the supported DateTime range",
    ),
    ("t", pa.array([FAR_US], pa.timestamp("us")), "outside the supported DateTime range"),
    (
        "ds",
        pa.array([[0, FAR_DAYS]], pa.list_(pa.date32())),
        r"ds=\['1970-01-01', '10183-09-21'\] has an item that is outside",
    ),
]


@pytest.mark.parametrize(("prop", "values", "match"), FAR)
def test_dates_outside_the_supported_range_are_refused(
    g: gl.Graph, tmp_path: Path, prop: str, values: pa.Array, match: str
) -> None:
    rows = pa.table({"k": ["far"], prop: values})
    pq.write_table(rows, tmp_path / "far.parquet")

    def insert() -> None:
        with g.write() as w:
            w.insert("M", rows)

    for write in (
        insert,
        lambda: g.load(tmp_path / "far.parquet", table="M"),
        lambda: g.load(rows, table="M", mode="merge"),
    ):
        before = state(g)
        with pytest.raises(gl.ValueConstraintError, match=rf"^M: 'far': .*{match}"):
            write()
        assert state(g) == before
    assert len(g.nodes("M")) == 1  # a full read still works


def test_far_dates_given_as_json_numbers_are_refused(g: gl.Graph) -> None:
    # JSON has no dates: a number is taken as days (Date) or microseconds (DateTime).
    for write in WRITES:
        _refused(g, write, {"d": FAR_DAYS}, r"d=10183-09-21 is outside")
        _refused(g, write, {"t": FAR_US}, r"t=17036-.* is outside")


def test_the_edges_of_the_range_are_accepted(g: gl.Graph) -> None:
    low = dt.datetime(1, 1, 1, tzinfo=dt.UTC)
    high = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.UTC)
    with g.write() as w:
        w.insert(
            "M",
            [
                {"k": "lo", "d": dt.date.min, "t": low, "ds": [dt.date.min]},
                {"k": "hi", "d": dt.date.max, "t": high, "ds": [dt.date.max]},
            ],
        )
    assert g.get("M", "hi")["t"] == high and g.get("M", "lo")["d"] == dt.date.min
    assert g.fsck().ok


def test_fsck_reports_nan_in_a_range_and_a_vector_and_far_dates(
    g: gl.Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as m:  # a graph written before the checks existed
        m.setattr(check, "value_violations", lambda t, rows: [])
        m.setattr(coerce, "_check_dates", lambda t, rows: None)
        with g.write() as w:
            w.insert(
                "M",
                [
                    {"k": "n1", "x": NAN},
                    {"k": "n2", "v": [NAN, 1.0]},
                    {"k": "n3", "v": [1.0, -INF]},
                ],
            )
        g.load(pa.table({"k": ["n4"], "d": pa.array([FAR_DAYS], pa.date32())}), table="M")
    before = g.head().id  # (`state` cannot list a row of year 10183)
    report = g.fsck()
    messages = [p.message for p in report.problems]
    assert {p.where for p in report.problems} == {"main:M"}, messages
    assert any("'n1'" in m and "x=nan is outside @range" in m for m in messages), messages
    assert sum("v holds NaN or an infinity" in m for m in messages) == 2, messages
    assert any(
        "'n4'" in m and "d=10183-09-21 is outside the supported Date range" in m for m in messages
    ), messages
    assert g.head().id == before


# --- Blob: text is base64 on every path -----------------------------------------------

RAW = b"\x89PNG\x00\xff\xfe"
B64 = base64.b64encode(RAW).decode()


@pytest.mark.parametrize("write", WRITES)
def test_blob_text_is_base64_on_every_write_path(g: gl.Graph, write: Write) -> None:
    write(g, {"b": B64})
    key = "a" if write in (_upsert, _update) else "new"
    row = g.get("M", key)
    assert row["b"] == RAW


def test_blob_bytes_and_arrow_text_columns(g: gl.Graph) -> None:
    with g.write() as w:
        w.insert("M", [{"k": "raw", "b": RAW}])
    g.load(pa.table({"k": ["txt"], "b": [B64]}), table="M")
    g.load(pa.table({"k": ["big"], "b": pa.array([B64], pa.large_string())}), table="M")
    g.load(pa.table({"k": ["bin"], "b": pa.array([RAW], pa.binary())}), table="M")
    for key in ("raw", "txt", "big", "bin"):
        assert g.get("M", key)["b"] == RAW, key


@pytest.mark.parametrize("write", [_insert, _load_records, _load_jsonl])
@pytest.mark.parametrize("bad", ["not base64!", "abc", "é"])
def test_blob_text_that_is_not_base64_is_a_type_error(g: gl.Graph, write: Write, bad: str) -> None:
    before = state(g)
    # A load names the record too: `record 1: M 'new': b: expected Blob ...`.
    with pytest.raises(
        gl.TypeMismatchError,
        match=r"(M\.b|M 'new': b): expected Blob "
        r"\(bytes, or text in base64\), got",
    ):
        write(g, {"b": bad})
    assert state(g) == before


def test_vector_check_on_sliced_chunks_with_null_rows() -> None:
    # Rows of a column come sliced and in chunks; a null vector's slots hold anything.
    from graphlake.constraints.domain import domain_violations
    from graphlake.schema.model import Property, TypeRef

    values = [float(i) for i in range(40)]
    values[2 * 2 + 1] = NAN  # row 2
    values[7 * 2] = INF  # row 7, which is null
    values[15 * 2] = -INF  # row 15
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(values, pa.float32()), 2, mask=pa.array([i == 7 for i in range(20)])
    )
    col = pa.chunked_array([vectors.slice(1, 10), vectors.slice(11)])
    ids = pa.chunked_array([pa.array([f"r{i}" for i in range(1, 20)])])
    found = domain_violations("M", Property("v", TypeRef("Vector", dim=2), True), col, ids)
    assert [v.entity_id for v in found] == ["r2", "r15"]
