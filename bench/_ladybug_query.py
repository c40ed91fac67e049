"""The query benchmark's LadybugDB side, in its own process (its native library never
shares a process with DuckDB and Lance):

    python bench/_ladybug_query.py JOB.json

JOB: {"person": parquet path, "knows": parquet path, "queries": {name: text},
"params": [{...}, ...], "warmup": n}. Prints one JSON line: {"import_s": float,
"ms": {name: [ms per params entry]}, "answers": {name: [sorted rows per params entry]}}.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    import ladybug

    job = json.loads(Path(sys.argv[1]).read_text())
    started = time.perf_counter()
    folder = tempfile.TemporaryDirectory(prefix="ladybug-bench-")  # removed at exit
    db = ladybug.Database(str(Path(folder.name) / "db"))
    con = ladybug.Connection(db)
    con.execute(
        "CREATE NODE TABLE Person(id STRING, name STRING, age INT32, city STRING, PRIMARY KEY(id))"
    )
    con.execute("CREATE REL TABLE Knows(FROM Person TO Person, id STRING)")
    con.execute(f"COPY Person FROM '{job['person']}'")
    con.execute(f"COPY Knows FROM '{job['knows']}'")
    import_s = time.perf_counter() - started
    ms: dict[str, list[float]] = {}
    answers: dict[str, list] = {}
    for name, text in job["queries"].items():
        for params in job["params"][: job["warmup"]]:
            con.execute(text, params).get_all()
        ms[name] = []
        for params in job["params"]:
            t = time.perf_counter()
            result = con.execute(text, params).get_all()
            ms[name].append((time.perf_counter() - t) * 1000)
            answers.setdefault(name, []).append(sorted((list(r) for r in result), key=repr))
    print(json.dumps({"import_s": import_s, "ms": ms, "answers": answers}))


if __name__ == "__main__":
    main()
