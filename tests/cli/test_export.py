"""`graphlake export`: a table or a query result to Parquet, CSV or JSONL, streamed, with
no row cap; an existing file is refused without --force (issue 14, item 5)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import graphlake as gl
from graphlake.cli import export_writers as export_module
from tests.cli.helpers import error, parsed, run, run_all

SCHEMA = """
node Doc { name: String @key  n: I64?  body: Blob?  v: Vector(2)?  tags: [String]?
           day: Date?  at: DateTime? }
"""
ROWS = 20_000  # past `sql`'s 10,000-row cap, and several scan batches


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("export") / "g"
    g = gl.Graph.init(path, SCHEMA)
    with g.write() as w:
        w.insert(
            "Doc",
            [
                {
                    "name": "a",
                    "n": 1,
                    "body": "aGk=",
                    "v": [0.5, 1.0],
                    "tags": ["x", "y"],
                    "day": "2024-02-29",
                    "at": "2024-02-29T12:00:00Z",
                }
            ],
        )
        w.insert(
            "Doc",
            pa.table(
                {"name": [f"k{i:05d}" for i in range(ROWS)], "n": pa.array(range(ROWS), pa.int64())}
            ),
        )
    return path


def test_a_table_exports_to_every_format_and_reads_back(root: Path, tmp_path: Path) -> None:
    parquet, csv, jsonl = (tmp_path / f"doc.{ext}" for ext in ("parquet", "csv", "jsonl"))
    procs = run_all(*(("export", root, "Doc", "-o", f, "--json") for f in (parquet, csv, jsonl)))
    summaries = [parsed(p) for p in procs]
    assert [s["format"] for s in summaries] == ["parquet", "csv", "jsonl"]
    assert all(s["rows"] == ROWS + 1 for s in summaries)
    expected = gl.Graph.open(root).nodes("Doc").sort_by("name")

    assert pq.read_table(parquet).sort_by("name").equals(expected)  # blobs stay bytes

    first = pacsv.read_csv(csv).sort_by("name").slice(0, 1).to_pylist()[0]
    assert first["body"] == base64.b64encode(b"hi").decode()  # Blob text is base64
    assert json.loads(first["v"]) == [0.5, 1.0] and json.loads(first["tags"]) == ["x", "y"]
    assert pacsv.read_csv(csv).num_rows == ROWS + 1

    lines = jsonl.read_text().splitlines()
    assert len(lines) == ROWS + 1
    row = next(r for r in map(json.loads, lines) if r["name"] == "a")
    assert row == {
        "id": "a",
        "name": "a",
        "n": 1,
        "body": "aGk=",
        "v": [0.5, 1.0],
        "tags": ["x", "y"],
        "day": "2024-02-29",
        "at": "2024-02-29T12:00:00+00:00",
    }


def test_jsonl_renders_every_type_as_json_output_does(root: Path, tmp_path: Path) -> None:
    """JSONL goes through DuckDB's JSON writer; `sql --json` (Python's `jsonable`) is the
    reference rendering: NaN and infinities null, blobs base64, ISO times, decimals as
    text; a type it does not cover (a struct, an interval) takes the Python path."""
    query = (
        "SELECT n, 'nan'::DOUBLE AS f, 'inf'::FLOAT AS g, [1.5, 'nan'::DOUBLE] AS l, "
        'body, v, tags, day, "at", 1.50::DECIMAL(5, 2) AS d, '
        "TIMESTAMP '2020-01-01 01:02:03.25' AS ts, "
        "TIMESTAMPTZ '2020-01-01 01:02:03+02' AS tz, TIME '01:02:03' AS t, "
        "'é\x01\"' AS s, NULL AS z FROM Doc WHERE name = 'a'"
    )
    out, out2 = tmp_path / "q.jsonl", tmp_path / "q2.jsonl"
    shown, exported, with_struct = run_all(
        ("sql", root, query, "--json"),
        ("export", root, "-q", query, "-o", out),
        ("export", root, "-q", f"SELECT {{'a': 1}} AS st, * FROM ({query})", "-o", out2),
    )
    assert exported.returncode == 0 and with_struct.returncode == 0, exported.stderr
    (expected,) = parsed(shown)
    assert expected["f"] is None and expected["d"] == "1.50" and expected["body"] == "aGk="
    assert '"n":1,' in out.read_text()  # DuckDB's compact writer, not json.dumps
    assert [json.loads(line) for line in out.read_text().splitlines()] == [expected]
    assert [json.loads(line) for line in out2.read_text().splitlines()] == [
        {"st": {"a": 1}, **expected}
    ]


def test_a_query_result_exports_without_a_row_cap(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "big.parquet"
    query = "SELECT name, n * 2 AS twice FROM Doc WHERE name LIKE 'k%'"
    proc = run("export", root, "--query", query, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Exported 20000 rows of the query result" in proc.stdout
    table = pq.read_table(out)
    assert table.num_rows == ROWS
    assert sorted(table.column("twice").to_pylist()) == [2 * i for i in range(ROWS)]


def test_format_option_overrides_the_suffix(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.txt"
    proc = run(
        "export",
        root,
        "-q",
        "SELECT name FROM Doc WHERE name = 'a'",
        "--format",
        "jsonl",
        "-o",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text()) == {"name": "a"}


def test_an_existing_file_needs_force(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "doc.csv"
    out.write_text("keep me\n")
    line = error(run("export", root, "Doc", "-o", out))
    assert "exists" in line and "--force" in line
    assert out.read_text() == "keep me\n"
    proc = run("export", root, "Doc", "-o", out, "--force")
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith('"id","name"')


BAD = [  # arguments after ROOT, and what the error line says
    (("-o", "x.parquet"), "a TABLE or --query SQL"),
    (("Doc", "-q", "SELECT 1", "-o", "x.parquet"), "a TABLE or --query SQL"),
    (("Doc", "-o", "x.xlsx"), "pass --format"),
    (("Nope", "-o", "x.csv"), "unknown node or edge type 'Nope'"),
    (("-q", "SELECT nope FROM Doc", "-o", "x.csv"), "SQL error"),
    (("-q", "COPY Doc TO 'y.csv'", "-o", "x.csv"), "only read-only queries"),
    (("Doc", "-o", "x.csv", "-b", "nope"), "unknown revision 'nope'"),
    (("Doc", "-o", "missing/x.csv"), "is not a folder"),
]


def test_bad_exports_are_one_line_errors_that_write_nothing(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    procs = run_all(*(("export", root, *args) for args, _ in BAD))
    for proc, (_, message) in zip(procs, BAD, strict=True):
        assert message in error(proc)
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file left behind


def test_a_table_streams_in_batches(root: Path, tmp_path: Path) -> None:
    """Memory holds one batch at a time: the writer is fed many batches, not one table."""
    snapshot = gl.Graph.open(root).snapshot()
    schema, batches = export_module.table_batches(snapshot, "Doc")
    sizes = [b.num_rows for b in batches]
    assert len(sizes) >= 3 and max(sizes) <= export_module.SCAN_BATCH_ROWS
    assert sum(sizes) == ROWS + 1 and schema.names[0] == "id"


def test_dates_survive_csv(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.csv"
    proc = run("export", root, "-q", "SELECT day, \"at\" FROM Doc WHERE name = 'a'", "-o", out)
    assert proc.returncode == 0, proc.stderr
    row = pacsv.read_csv(out).to_pylist()[0]
    assert row["day"] == dt.date(2024, 2, 29)
    assert row["at"] == dt.datetime(2024, 2, 29, 12, tzinfo=dt.UTC)
