"""The merge-cost shape in doltlite (Dolt's version control through SQLite's API).

Run as a script, never imported by the benchmark itself: `import doltlite` must come
before anything loads `sqlite3` (on Linux it then preloads libdoltlite in-process; if
`sqlite3` was loaded first it re-execs the interpreter), so every use is a fresh process:

    python bench/_doltlite.py build N CONSTRAINED DIR   # base + both sides' commits
    python bench/_doltlite.py merge DIR CONSTRAINED     # one `dolt_merge('dev')`, timed

Each prints one JSON line. The shape matches `merge_cost.py`:
  item(key TEXT PRIMARY KEY, n INTEGER, tag TEXT)       node table, N rows
  link(id TEXT PRIMARY KEY, src TEXT, dst TEXT)          edge table, a chain k_i -> k_i+1
Constrained adds `CREATE UNIQUE INDEX item(tag)`, foreign keys link.src/dst -> item.key
(with `PRAGMA foreign_keys = ON`) and the indexes on link(src), link(dst) that the
foreign keys need (Dolt requires them; graphlake always has BTREE indexes there too).
Unconstrained has no secondary index at all.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

DB = "repo.db"


def changes(n: int) -> dict[str, dict[str, object]]:
    """Which rows each side changes (the same choice as merge_cost.py)."""
    return {
        "dev": {"insert": "new-dev", "update": key(n // 3), "delete": n // 2, "value": -1},
        "main": {"insert": "new-main", "update": key(n // 4), "delete": (2 * n) // 3, "value": -2},
    }


def key(i: int) -> str:
    return f"k{i:07d}"


def edge(i: int) -> str:
    return f"e{i:07d}"


def _connect(path: Path, constrained: bool):
    import doltlite  # noqa: F401, I001  (must load before sqlite3)
    import sqlite3

    con = sqlite3.connect(str(path), isolation_level=None)
    if constrained:
        con.execute("PRAGMA foreign_keys = ON")
    return con


def _side(con, n: int, spec: dict[str, object], tag: str) -> None:
    d = int(spec["delete"])  # type: ignore[arg-type]
    con.execute("BEGIN")
    con.execute("INSERT INTO item VALUES (?, ?, ?)", (spec["insert"], 1, tag))
    con.execute("UPDATE item SET n = ? WHERE key = ?", (spec["value"], spec["update"]))
    # Cascade by hand: the chain's edges into and out of node d are e(d-1) and e(d).
    con.execute("DELETE FROM link WHERE id IN (?, ?)", (edge(d - 1), edge(d)))
    con.execute("DELETE FROM item WHERE key = ?", (key(d),))
    con.execute("COMMIT")


def build(n: int, constrained: bool, folder: Path) -> dict[str, float]:
    folder.mkdir(parents=True, exist_ok=True)
    con = _connect(folder / DB, constrained)
    con.execute("CREATE TABLE item(key TEXT PRIMARY KEY, n INTEGER NOT NULL, tag TEXT)")
    if constrained:
        con.execute("CREATE UNIQUE INDEX item_tag ON item(tag)")
        con.execute(
            "CREATE TABLE link(id TEXT PRIMARY KEY, "
            "src TEXT NOT NULL REFERENCES item(key), dst TEXT NOT NULL REFERENCES item(key))"
        )
        con.execute("CREATE INDEX link_src ON link(src)")
        con.execute("CREATE INDEX link_dst ON link(dst)")
    else:
        con.execute("CREATE TABLE link(id TEXT PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL)")
    t0 = time.perf_counter()
    con.execute("BEGIN")
    con.executemany("INSERT INTO item VALUES (?, ?, ?)", ((key(i), i, f"t{i}") for i in range(n)))
    con.executemany(
        "INSERT INTO link VALUES (?, ?, ?)", ((edge(i), key(i), key(i + 1)) for i in range(n - 1))
    )
    con.execute("COMMIT")
    con.execute("SELECT dolt_commit('-A', '-m', 'base')").fetchall()
    load_s = time.perf_counter() - t0
    spec = changes(n)
    con.execute("SELECT dolt_branch('dev')").fetchall()
    con.execute("SELECT dolt_checkout('dev')").fetchall()
    _side(con, n, spec["dev"], "nd")
    con.execute("SELECT dolt_commit('-A', '-m', 'dev')").fetchall()
    con.execute("SELECT dolt_checkout('main')").fetchall()
    _side(con, n, spec["main"], "nm")
    con.execute("SELECT dolt_commit('-A', '-m', 'main')").fetchall()
    con.close()
    return {"load_s": load_s}


def merge(folder: Path, constrained: bool, n: int) -> dict[str, object]:
    con = _connect(folder / DB, constrained)
    branch = con.execute("SELECT active_branch()").fetchone()[0]
    base_rss = _maxrss_mb()
    t0 = time.perf_counter()
    out = con.execute("SELECT dolt_merge('dev')").fetchall()
    seconds = time.perf_counter() - t0
    peak = _maxrss_mb()
    spec = changes(n)
    got = dict(
        con.execute(
            "SELECT key, n FROM item WHERE key IN (?, ?, ?, ?, ?, ?)",
            (
                spec["dev"]["update"],
                spec["main"]["update"],
                spec["dev"]["insert"],
                spec["main"]["insert"],
                key(int(spec["dev"]["delete"])),  # type: ignore[arg-type]
                key(int(spec["main"]["delete"])),
            ),  # type: ignore[arg-type]
        ).fetchall()
    )
    links = con.execute("SELECT count(*) FROM link").fetchone()[0]
    conflicts = con.execute("SELECT count(*) FROM dolt_conflicts").fetchone()[0]
    problems = []
    if branch != "main":
        problems.append(f"merged on {branch}")
    if got.get(spec["dev"]["update"]) != -1 or got.get(spec["main"]["update"]) != -2:
        problems.append("updates lost")
    if set(got) != {
        spec["dev"]["update"],
        spec["main"]["update"],
        spec["dev"]["insert"],
        spec["main"]["insert"],
    }:
        problems.append(f"rows {sorted(got)}")
    if links != n - 1 - 4:
        problems.append(f"{links} links")
    if conflicts:
        problems.append(f"{conflicts} conflicts")
    con.close()
    return {
        "seconds": seconds,
        "rss_base_mb": base_rss,
        "rss_peak_mb": peak,
        "result": str(out[0][0]) if out else "",
        "check": "; ".join(problems) or "ok",
    }


def _maxrss_mb() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib * 1024 / 1e6 if sys.platform != "darwin" else kib / 1e6


def version() -> str:
    from importlib.metadata import version as v

    return v("doltlite")


def main(argv: list[str]) -> int:
    cmd = argv[0]
    if cmd == "build":
        n, constrained, folder = int(argv[1]), argv[2] == "1", Path(argv[3])
        print(json.dumps(build(n, constrained, folder)))
    elif cmd == "merge":
        folder, constrained, n = Path(argv[1]), argv[2] == "1", int(argv[3])
        print(json.dumps(merge(folder, constrained, n)))
    else:
        raise SystemExit(f"unknown command {cmd!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
