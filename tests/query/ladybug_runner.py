"""Loads the social graph into LadybugDB and runs queries; prints the results as JSON.

Run as a script in its own process, so Ladybug's native library never shares a process
with DuckDB and Lance: reads `{"rows": {table: [row, ...]}, "queries": [text, ...]}` on
stdin (dates as ISO strings), prints `{"import_s": float, "results": [...]}` where each
result is `{"rows": [[value, ...], ...]}` or `{"error": message}`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.query.social import EDGE_ENDS, LADYBUG_DDL


def load(con, rows: dict[str, list[dict]]) -> None:
    for ddl in LADYBUG_DDL:
        con.execute(ddl)
    for table in ("Person", "Company"):
        cols = list(rows[table][0])
        sets = ", ".join(f"{c}: {_cast(c, 'r')}" for c in cols)
        con.execute(
            f"UNWIND $rows AS r CREATE (:{table} {{id: r.name, {sets}}})", {"rows": rows[table]}
        )
    for table, (src, dst) in EDGE_ENDS.items():
        cols = [c for c in rows[table][0] if c not in ("src", "dst")]
        sets = ", ".join(f"{c}: r.{c}" for c in cols)
        con.execute(
            f"UNWIND $rows AS r MATCH (a:{src} {{id: r.src}}), (b:{dst} {{id: r.dst}}) "
            f"CREATE (a)-[:{table} {{{sets}}}]->(b)",
            {"rows": rows[table]},
        )


def _cast(column: str, var: str) -> str:
    return f"date({var}.{column})" if column == "born" else f"{var}.{column}"


def plain(value):
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def main() -> None:
    import ladybug

    job = json.load(sys.stdin)
    started = time.perf_counter()
    folder = tempfile.TemporaryDirectory(prefix="ladybug-")  # removed at exit
    db = ladybug.Database(str(Path(folder.name) / "db"))
    con = ladybug.Connection(db)
    load(con, job["rows"])
    import_s = time.perf_counter() - started
    results = []
    for text in job["queries"]:
        try:
            res = con.execute(text, job.get("params") or {})
            results.append({"rows": [plain(r) for r in res.get_all()]})
        except Exception as exc:  # any engine error is a result to compare
            results.append({"error": str(exc).splitlines()[0]})
    json.dump({"import_s": import_s, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
