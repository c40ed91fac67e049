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


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_ingest_runs_at_80_columns_break_no_number(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`graphlake ingest-status`: the progress cell read `10,00 0/10, 000 (100% ) rows`
    at 80 columns (every column folded). Now numbers, states and headers stay whole and
    the columns that do not fit are named under the table."""
    import io

    from rich.cells import cell_len
    from rich.console import Console

    from graphlake.cli import ingest_status
    from graphlake.ingestion.status import RunSummary

    def summary(n: int, into: str, done: int, total: int, unit: str) -> RunSummary:
        return RunSummary(
            run_id=f"01KBC8Z3M8Q0N5W7X2Y4Z6A8B{n}",
            state="finished" if done == total else "abandoned",
            created="2026-12-01T15:00:00.000000Z",
            into=into,
            format="jsonl",
            table=None,
            workers=4,
            phases=["nodes"],
            done=done,
            total=total,
            rows=done,
            unit=unit,
        )

    runs = [
        summary(0, "main", 10_000, 10_000, "rows"),
        summary(1, "a-target-branch-with-a-long-name", 1_000_000, 2_000_000, "lines"),
    ]
    for width in (80, 100, 200):
        out = io.StringIO()
        monkeypatch.setattr(ingest_status, "console", Console(file=out, width=width, no_color=True))
        ingest_status.print_runs(runs)
        text = out.getvalue()
        lines = text.splitlines()
        assert all(cell_len(line) <= width for line in lines), text
        for whole in (
            "10,000/10,000 (100%) rows",
            "1,000,000/2,000,000 (50%) lines",
            "01KBC8Z3M8Q0N5W7X2Y4Z6A8B0",
            "01KBC8Z3M8Q0N5W7X2Y4Z6A8B1",
            "finished",
            "abandoned",
        ):
            assert whole in text, (width, text)
        header = next(line for line in lines if "run" in line)
        assert "state" in header and "done" in header, text
        if width == 80:
            assert "not shown: into, created (UTC), workers, records" in text, text
        if width == 200:
            assert "not shown" not in text and "a-target-branch-with-a-long-name" in text


def test_the_load_progress_line_fits_80_columns(tmp_path: Path) -> None:
    """`graphlake load` on a (pretend) terminal of 80 columns: every frame of the bar is
    one line of at most 80 cells, and the counts are whole."""
    from rich.cells import cell_len

    from tests.cli.helpers import run

    root = tmp_path / "g"
    gl.Graph.init(root, "node P { name: String @key  n: I64? }")
    data = tmp_path / "p.jsonl"
    n = 30_000
    data.write_text(
        "".join(f'{{"type": "P", "data": {{"name": "p{i}", "n": {i}}}}}\n' for i in range(n))
    )
    proc = run("load", root, data, env={"TTY_COMPATIBLE": "1", "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    frames = [f for f in re.split(r"[\r\n]", ANSI.sub("", proc.stderr)) if f.strip()]
    assert frames and all(cell_len(f) <= 80 for f in frames), frames
    last = frames[-1]
    assert "loaded" in last and f"{n}/{n} rows" in last, frames
