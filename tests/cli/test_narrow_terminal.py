"""The CLI at 80 columns (issue 23, item 11): values and headers of `show` and `search`
are never broken mid-word; long values are abbreviated with "…" (vectors as
`[0.12, 0.51, … (8)]`), ids never; columns that do not fit are named, not squeezed;
`search` takes `--columns`."""

from __future__ import annotations

import re
from pathlib import Path

import graphlake as gl
from tests.cli.helpers import run_all, stdout

SCHEMA = """
node Paper { title: String @key  published: Date?  abstract: String?  venue: String?
             embedding: Vector(8)? @index  ncited: I64?  citations: I64? }
"""
TITLE = "A rather long paper title number 0 about graph stores"
ABSTRACT = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod " * 3


def _cells(out: str) -> list[list[str]]:
    return [
        [c.strip() for c in re.split("[│┃]", line)[1:-1]]
        for line in out.splitlines()
        if line.startswith(("│", "┃"))
    ]


def test_show_and_search_at_80_columns_break_no_word(tmp_path: Path) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    with g.write() as w:
        w.insert(
            "Paper",
            [
                {
                    "title": TITLE,
                    "published": "2015-01-01",
                    "abstract": ABSTRACT,
                    "venue": "Proceedings of the VLDB Endowment",
                    "embedding": [0.125] * 8,
                    "ncited": 10000,
                    "citations": 12345,
                }
            ],
        )
    narrow = {"COLUMNS": "80"}
    show, search = run_all(
        ("show", root, "Paper"),
        ("search", root, "Paper", "--near", TITLE, "-c", "title,ncited"),
        env=narrow,
    )
    out = stdout(show)
    assert all(len(line) <= 80 for line in out.splitlines())
    header, *rows = _cells(out)
    columns = ["id", "title", "published", "abstract", "venue", "embedding", "ncited", "citations"]
    shown = [h for h in header if h]
    # Headers whole; columns that do not fit are left out and named, never squeezed.
    assert shown == columns[: len(shown)] and len(shown) >= 5
    hidden = columns[len(shown) :]
    assert not hidden or f"not shown: {', '.join(hidden)}" in out
    words = " ".join(" ".join(r) for r in rows).split()
    assert "2015-01-01" in words
    allowed = set(f"{TITLE} {ABSTRACT} Proceedings of the VLDB Endowment".split())
    allowed |= {"[0.125,", "0.125,", "…", "(8)]", "10000", "12345", "2015-01-01"}
    broken = [w for w in words if w not in allowed and not w.endswith("…")]
    assert broken == [], broken  # every fragment is a whole word or ends with "…"
    assert "ipsum…" not in words and " ".join(words).count("Lorem") == 1  # abbreviated
    found = stdout(search)
    assert "ncited" in found and "abstract" not in found and "published" not in found
