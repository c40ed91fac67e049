"""One home for SQL quoting (issue 24 item 3): `graphlake.sqltext` quotes names and text
for DuckDB, checked against DuckDB itself, and no other module doubles quotes by hand."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

import graphlake
from graphlake.sqltext import ident, string_literal

ROOT = Path(graphlake.__file__).parent
# A hand-made copy: doubling a quote character with str.replace.
COPY = re.compile(r"""\.replace\(\s*(['"])(\\?['"])\1\s*,\s*(['"])(\\?['"]){2}\3\s*\)""")
WEIRD = ["plain", "it's", 'say "hi"', "a'b\"c''d", "; DROP TABLE t; --", "naïve ☃", ""]


@pytest.mark.parametrize("value", WEIRD)
def test_duckdb_reads_back_every_literal_and_name(value: str) -> None:
    con = duckdb.connect()
    assert con.execute(f"SELECT {string_literal(value)}").fetchone() == (value,)
    if value:
        con.execute(f"CREATE TABLE t ({ident(value)} INTEGER)")
        assert [d[0] for d in con.execute("SELECT * FROM t").description] == [value]


def test_no_module_quotes_by_hand() -> None:
    assert COPY.search("""x.replace("'", "''")""") and COPY.search("""x.replace('"', '""')""")
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted(ROOT.rglob("*.py"))
        if p.name != "sqltext.py"
        for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if COPY.search(line)
    ]
    assert offenders == [], f"quote with graphlake.sqltext instead: {offenders}"
