"""Replays a merge scenario in doltlite (Dolt through SQLite's API) and prints the result.

Run as a script in its own process (`import doltlite` must precede any `sqlite3` import):
reads a JSON list of steps on stdin, prints JSON `{"outcomes": [...], "rows": {branch:
[[name, age, b], ...]}}`. Steps (the same ones `test_dolt_differential.py` replays on
graphlake): ["branch", name], ["update", branch, key, {col: value}], ["insert", branch,
key, {col: value}], ["delete", branch, key], ["merge", source, into].
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path


def main() -> None:
    import doltlite  # noqa: F401, I001  (must load before sqlite3)
    import sqlite3

    steps = json.load(sys.stdin)
    folder = Path(tempfile.mkdtemp(prefix="dolt-diff-"))
    con = sqlite3.connect(str(folder / "repo.db"), isolation_level=None)

    def q(sql: str, *args: object) -> list[tuple]:
        return con.execute(sql, args).fetchall()

    q("CREATE TABLE person(name TEXT PRIMARY KEY, age INTEGER, b TEXT)")
    q("INSERT INTO person VALUES ('Alice', 30, NULL), ('Bob', 25, NULL)")
    heads = {"main": q("SELECT dolt_commit('-A', '-m', 'base')")[0][0]}
    branches = ["main"]
    outcomes: list[str] = []
    for step in steps:
        kind = step[0]
        if kind == "branch":
            q("SELECT dolt_branch(?)", step[1])
            heads[step[1]] = heads["main"]
            branches.append(step[1])
            continue
        if kind == "merge":
            source, into = step[1], step[2]
            q("SELECT dolt_checkout(?)", into)
            try:
                out = str(q("SELECT dolt_merge(?)", source)[0][0])
            except sqlite3.Error:
                out = ""
            if q("SELECT count(*) FROM dolt_conflicts")[0][0] or not out:
                # A conflicting dolt_merge raises (nothing to abort) or leaves conflicts.
                with contextlib.suppress(sqlite3.Error):
                    q("SELECT dolt_merge('--abort')")
                outcomes.append("conflict")
            elif out == "Already up to date":
                outcomes.append("already_up_to_date")
            elif out == heads[source]:
                outcomes.append("fast_forward")
                heads[into] = out
            else:
                outcomes.append("merged")
                heads[into] = out
            continue
        branch, key = step[1], step[2]
        q("SELECT dolt_checkout(?)", branch)
        if kind == "update":
            for col, value in step[3].items():
                q(f"UPDATE person SET {col} = ? WHERE name = ?", value, key)
        elif kind == "insert":
            q(
                "INSERT INTO person(name, age, b) VALUES (?, ?, ?)",
                key,
                step[3].get("age"),
                step[3].get("b"),
            )
        elif kind == "delete":
            q("DELETE FROM person WHERE name = ?", key)
        heads[branch] = q("SELECT dolt_commit('-A', '-m', ?)", json.dumps(step))[0][0]
    rows = {}
    for b in branches:
        q("SELECT dolt_checkout(?)", b)
        rows[b] = [list(r) for r in q("SELECT name, age, b FROM person ORDER BY name")]
    print(json.dumps({"outcomes": outcomes, "rows": rows}))


if __name__ == "__main__":
    main()
