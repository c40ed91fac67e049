"""The README's tour (issue 23, item 13) pasted line by line into a Python REPL, in a
fresh folder: no line fails (a `def` needs its blank line), and its last reads answer
with rows, as the output printed in the README shows."""

from __future__ import annotations

import code
import contextlib
import io
import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def tour_code() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## A short tour (Python)") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_tour_runs_in_a_repl_and_its_reads_find_rows(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    repl = code.InteractiveConsole()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            for line in tour_code().splitlines():
                repl.push(line)
            repl.push("")
    finally:
        os.chdir(cwd)
    assert err.getvalue() == ""
    found = repl.locals
    g = found["g"]
    hits = g.search("Person", vector=[0.9, 0.1, 0.0, 0.0], k=5, branch="dev")
    assert hits["name"].to_pylist()[0] == "Bob"
    rows = g.query("MATCH (a:Person)-[:Knows]->(b) RETURN a.name, b.name", branch="dev")
    assert rows.to_pylist() == [{"a.name": "Bob", "b.name": "Carol"}]
    assert g.get("Person", "Bob", branch="dev")["age"] == 42  # the birthday ran
    # The README prints the real answers of those two lines.
    assert "# Bob" in tour_code() and "Carol" in tour_code().split("g.query(")[-1]


def test_the_docs_quick_start_is_the_readme_tour() -> None:
    page = (README.parent / "docs" / "quickstart.md").read_text(encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    tour = text[text.index("## A short tour (Python)") : text.index("## Documentation")]
    assert tour.split("\n", 1)[1].strip() in page
