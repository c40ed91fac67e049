"""`graphlake ingest` and `graphlake merge-many`, run as real subprocesses.

Exit codes (as `graphlake merge`): 0 done, 1 conflicts (printed), 2 any other error.
"""

from __future__ import annotations

from pathlib import Path

import graphlake as gl
from tests.cli.helpers import error, parsed, run_all, stdout
from tests.ingest.helpers import SCHEMA, ingest_branches, keys, write_parquet_files


def _shards(root: Path) -> gl.Graph:
    """Branches a and b insert different Docs; c inserts a key b inserts too, with
    another value (a conflict between sources); d inserts a1 with another value than a
    (a conflict with a, and with t, a's copy)."""
    g = gl.Graph.init(root, SCHEMA)
    for name, docs in (("a", ["a1", "a2"]), ("b", ["b1", "same"]), ("c", ["same"]), ("d", ["a1"])):
        g.create_branch(name)
        with g.write(name) as w:
            w.insert("Doc", [{"key": k, "n": {"c": 1, "d": 5}.get(name, 0)} for k in docs])
    g.create_branch("t", from_="a")
    return g


def test_ingest_and_merge_many_commands(tmp_path: Path) -> None:
    ingest_root, merge_root = tmp_path / "ingest", tmp_path / "merge"
    g = gl.Graph.init(ingest_root, SCHEMA)
    write_parquet_files(tmp_path / "in", [3_000, 2_000])
    shards = _shards(merge_root)
    a_head = shards.head("a").id
    ingested, missing, merged, conflict, overlap, unknown, dry, theirs, with_target = run_all(
        (
            "ingest",
            ingest_root,
            tmp_path / "in",
            "--table",
            "Doc",
            "--workers",
            "2",
            "--run-id",
            "cli-run",
            "--commit-every",
            "1000",
            "--json",
        ),
        ("ingest", ingest_root, tmp_path / "nope.parquet", "--table", "Doc"),
        ("merge-many", merge_root, "a", "b", "--into", "main", "--json"),
        ("merge-many", merge_root, "b", "c", "--into", "a"),
        ("merge-many", merge_root, "b", "c", "--into", "a", "--strict-disjoint"),
        ("merge-many", merge_root, "a", "nope", "--into", "main"),
        (
            "merge-many",
            merge_root,
            "b",
            "c",
            "--into",
            "a",
            "--dry-run",
            "--json",
            "--lineage",
            "verify",
        ),
        ("merge-many", merge_root, "d", "b", "--into", "t", "--strategy", "theirs"),
        ("merge-many", merge_root, "d", "b", "--into", "a"),
    )
    result = parsed(ingested)
    assert (result["run_id"], result["rows"], result["rows_per_worker"]) == (
        "cli-run",
        5_000,
        [2_500, 2_500],
    )
    assert result["merges"]["all"]["stats"]["Doc"]["adopted_rows"] == 5_000
    assert len(keys(g)) == 5_000 and ingest_branches(g) == []
    assert "no such file" in error(missing, 2)

    many = parsed(merged)
    assert many["outcome"] == "merged" and many["source"] == "a,b"
    assert len(shards.head().parents) == 3 and keys(shards) == ["a1", "a2", "b1", "same"]
    assert "conflict" in error_tail(conflict, 1) and "same" in conflict.stdout
    # A conflict between two sources names them, not the target (which has no such row),
    # and offers no --strategy, which cannot resolve it.
    assert "n: c 1 / b 0" in conflict.stdout
    assert "Conflicts between two sources are never resolved by --strategy" in conflict.stdout
    assert "--strategy theirs" not in conflict.stdout
    report = parsed(dry, 1)
    assert (report["outcome"], report["dry_run"]) == ("conflict", True)
    [between] = report["conflicts"]
    assert between["entity_id"] == "same" and between["sides"] == ["c", "b"]
    # Between two sources: each side's row under its name; `target` is the target's row
    # (the target has no row "same").
    assert (between["rows"]["c"]["n"], between["rows"]["b"]["n"]) == (1, 0)
    assert between["target"] is None
    # A conflict with the target is resolved by --strategy; without it, the hint offers it.
    assert "theirs: d's values" in stdout(theirs)
    assert "--strategy theirs" in with_target.stdout and "Conflicts between" not in (
        with_target.stdout
    )
    t = gl.Graph.open(merge_root)
    assert t.get("Doc", "a1", branch="t")["n"] == 5
    assert len(t.head("t").parents) == 3 and t.head("a").id == a_head
    # merge_many refuses an overlap under strict_disjoint with a MergeError: exit 2
    assert "strict_disjoint: sources overlap in Doc" in error(overlap, 2)
    assert "nope" in error(unknown, 2)

    (again,) = run_all(
        ("ingest", ingest_root, tmp_path / "in", "--table", "Doc", "--run-id", "cli-run")
    )
    assert "had finished already" in stdout(again)


def error_tail(proc, code: int) -> str:
    """Conflicts print a table on stdout, then one error line on stderr."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]
