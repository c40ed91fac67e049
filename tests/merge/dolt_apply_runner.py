"""Replays revert / cherry-pick histories in doltlite and prints what happened.

Run as a script in its own process (`import doltlite` must precede any `sqlite3` import):
reads a JSON list of scenarios on stdin (each a list of steps), prints one JSON line: a
list of `{"outcomes": [...], "rows": {branch: [[name, age, b], ...]}}`, one per scenario.
Steps (those `test_dolt_revert_pick.py` replays on graphlake): ["branch", name],
["update" | "insert", branch, key, {col: value}], ["delete", branch, key, {}] (each its
own commit, numbered by its index in the list), ["revert", branch, i], ["pick", i, into]
(i: the index of the step whose commit is reverted or picked).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path


def replay(steps: list[list]) -> dict:
    import sqlite3

    folder = Path(tempfile.mkdtemp(prefix="dolt-apply-"))
    con = sqlite3.connect(str(folder / "repo.db"), isolation_level=None)

    def q(sql: str, *args: object) -> list[tuple]:
        return con.execute(sql, args).fetchall()

    q("CREATE TABLE person(name TEXT PRIMARY KEY, age INTEGER, b TEXT)")
    q("INSERT INTO person VALUES ('Alice', 30, NULL), ('Bob', 25, NULL)")
    q("SELECT dolt_commit('-A', '-m', 'base')")
    branches = ["main"]
    made: dict[int, str] = {}
    outcomes: list[str] = []
    for i, step in enumerate(steps):
        kind = step[0]
        if kind == "branch":
            q("SELECT dolt_branch(?)", step[1])
            branches.append(step[1])
            continue
        if kind in ("revert", "pick"):
            branch, ref = (step[1], step[2]) if kind == "revert" else (step[2], step[1])
            q("SELECT dolt_checkout(?)", branch)
            call = "dolt_revert" if kind == "revert" else "dolt_cherry_pick"
            try:
                q(f"SELECT {call}(?)", made[ref])
                outcomes.append("applied")
            except sqlite3.Error as exc:
                text = str(exc).lower()
                if "conflict" in text:
                    outcomes.append("conflict")
                elif "no changes" in text:  # the branch has the changes already
                    outcomes.append("noop")
                else:
                    outcomes.append(f"error: {exc}")
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
        else:
            q("DELETE FROM person WHERE name = ?", key)
        made[i] = q("SELECT dolt_commit('-A', '-m', ?)", json.dumps(step))[0][0]
    rows = {}
    for b in branches:
        q("SELECT dolt_checkout(?)", b)
        rows[b] = [list(r) for r in q("SELECT name, age, b FROM person ORDER BY name")]
    return {"outcomes": outcomes, "rows": rows}


def main() -> None:
    import doltlite  # noqa: F401  (must load before sqlite3)

    print(json.dumps([replay(steps) for steps in json.load(sys.stdin)]))


if __name__ == "__main__":
    main()
