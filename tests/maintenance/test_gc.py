"""gc: removes what no branch, reachable commit or publication in flight needs, and
nothing else. Every branch and every commit of every branch's log reads the same after."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

import graphlake as gl
from graphlake.catalog.commits import TableState
from graphlake.maintenance.lance_gc import TableSweep
from graphlake.recovery.records import RecordStore
from graphlake.storage.tables import index_columns
from tests.conftest import reopen

ZERO = dt.timedelta(0)


# --- helpers ------------------------------------------------------------------------------


def read_all(g: gl.Graph, ref: str) -> dict[str, Any]:
    """Every row of every table at a branch or commit id, sorted."""
    snap = g.snapshot(ref)
    return {
        name: sorted(snap.read(name).to_pylist(), key=lambda r: r["id"])
        for name in g.schema.table_names
    }


def everything(g: gl.Graph) -> dict[str, Any]:
    """Each live branch's head and rows, and the rows of every commit in every log."""
    out: dict[str, Any] = {}
    for branch in g.branches():
        out[f"branch:{branch}"] = (g.head(branch).id, read_all(g, branch))
        for commit in g.log(branch):
            key = f"commit:{commit.id}"
            if key not in out:
                out[key] = read_all(g, commit.id)
    return out


def objects(g: gl.Graph) -> dict[str, tuple[int, dt.datetime]]:
    """Every object under the graph root with its size and modification time."""
    return {i.key: (i.size, i.modified) for i in g.repo.store.list_info("")}


def write(g: gl.Graph, branch: str, fn) -> None:
    with g.write(branch) as w:
        fn(w)


def person_table_id(g: gl.Graph, branch: str = "main") -> str:
    return g.head(branch).tables["Person"].table_id


def lance_branches(g: gl.Graph, table_id: str) -> set[str]:
    import lance

    ds = lance.dataset(g.repo.tables.uri(table_id), storage_options=g.storage_options)
    return set(ds.branches.list())


def lance_versions(g: gl.Graph, state: TableState) -> set[int]:
    import lance

    ds = lance.dataset(g.repo.tables.uri(state.table_id), storage_options=g.storage_options)
    return {v["version"] for v in ds.checkout_version((state.lance_branch, None)).versions()}


def build_history(g: gl.Graph) -> dict[str, Any]:
    """Branches, merges (a criss-cross, so a virtual base), an N-way merge with zero-copy
    adoption whose shard branches are then deleted, a deleted unmerged branch, a crashed
    writer's unpublished versions, and an optimize."""
    info: dict[str, Any] = {}
    # A merged feature branch with updates and deletes.
    g.create_branch("dev")
    write(g, "dev", lambda w: w.update("Person", [{"name": "Bob", "age": 41}]))
    write(g, "dev", lambda w: w.delete("Knows", ["k2"]))
    write(g, "main", lambda w: w.insert("Person", [{"name": "Dan"}]))
    assert g.merge("dev", into="main").outcome == "merged"

    # Criss-cross: the next merge of a and b needs a virtual base.
    g.create_branch("a")
    g.create_branch("b")
    write(g, "a", lambda w: w.update("Person", [{"name": "Alice", "age": 1}]))
    write(g, "b", lambda w: w.update("Person", [{"name": "Bob", "age": 2}]))
    g.create_branch("a1", from_=g.head("a").id)
    g.create_branch("b1", from_=g.head("b").id)
    assert g.merge("b1", into="a").outcome == "merged"
    assert g.merge("a1", into="b").outcome == "merged"
    g.delete_branch("a1")
    g.delete_branch("b1")
    write(g, "a", lambda w: w.update("Person", [{"name": "Bob", "age": 3}]))
    write(g, "b", lambda w: w.update("Person", [{"name": "Carol", "age": 4}]))
    assert g.merge("b", into="a").outcome == "merged"

    # Insert-only shards land as one commit by zero-copy adoption; then their names go.
    shards = [f"ingest/run1/w{i}" for i in range(3)]
    for i, name in enumerate(shards):
        g.create_branch(name)
        write(
            g,
            name,
            lambda w, i=i: w.insert("Person", [{"name": f"w{i}-{j}", "age": j} for j in range(4)]),
        )
    result = g.merge_many(shards, into="main")
    assert result.outcome == "merged"
    assert result.stats["Person"].adopted_rows == 12
    for name in shards:
        g.delete_branch(name)

    # An unmerged branch that is deleted: its versions are needed by nothing.
    g.create_branch("scratch")
    write(g, "scratch", lambda w: w.insert("Person", [{"name": "Tmp"}]))
    write(g, "scratch", lambda w: w.update("Person", [{"name": "Tmp", "age": 9}]))
    info["scratch_lance"] = g.head("scratch").tables["Person"].lance_branch
    g.delete_branch("scratch")

    # A writer that made Lance versions and never published them (crash / lost race).
    head = g.head("main").tables["Person"]
    import pyarrow as pa

    from graphlake.schema.arrow import arrow_schema

    schema = arrow_schema(g.schema.table("Person"))
    row = {f.name: None for f in schema}
    row.update({"id": "Ghost", "name": "Ghost"})
    crashed = g.repo.tables.apply(
        head,
        ["Alice"],
        False,
        pa.Table.from_pylist([row], schema),
        index_columns(g.schema.table("Person")),
    )
    assert crashed.version > head.version
    info["crashed"] = crashed

    # More writes after the crash (they fork), and an optimize.
    for i in range(3):
        write(g, "main", lambda w, i=i: w.insert("Person", [{"name": f"m{i}"}]))
    g.optimize()
    write(g, "b", lambda w: w.insert("Company", [{"name": "Beta"}]))
    return info


# --- the main property ---------------------------------------------------------------------


def test_gc_keeps_every_branch_and_commit_and_reclaims_the_rest(people: gl.Graph) -> None:
    g = people
    info = build_history(g)
    before = everything(g)
    files_before = objects(g)
    tid = person_table_id(g)
    lance_before = lance_branches(g, tid)
    assert info["scratch_lance"] in lance_before

    dry = g.gc(grace=ZERO, reflog_keep=ZERO, dry_run=True)
    assert objects(g) == files_before  # a dry run touches nothing
    assert dry.dry_run and dry.versions > 0

    report = reopen(g).gc(grace=ZERO, reflog_keep=ZERO)
    assert not report.warnings, report.warnings
    # The dry run said exactly what the real run then did.
    for key in ("versions", "files", "bytes", "lance_branches", "commit_objects", "claims"):
        assert getattr(report, key) == getattr(dry, key), key
    assert report.versions > 0 and report.files > 0 and report.bytes > 0
    assert report.lance_branches >= 2  # the deleted branch's, and the virtual bases'
    assert report.commit_objects >= 1  # the virtual merge base (unreferenced)
    assert report.claims > 0
    assert json.loads(json.dumps(report.to_dict()))["versions"] == report.versions

    files_after = objects(g)
    gone = set(files_before) - set(files_after)
    assert gone and set(files_after) <= set(files_before)  # gc writes nothing
    assert sum(files_before[k][0] for k in gone) >= report.bytes - report.commit_bytes
    # The deleted branch's Lance branch went, with its directory and its claims.
    lance_after = lance_branches(g, tid)
    assert info["scratch_lance"] not in lance_after
    assert not [k for k in files_after if f"/tree/{info['scratch_lance']}/" in k]
    assert not [
        k for k in files_after if k.startswith(f"_graphlake/claims/{tid}/{info['scratch_lance']}/")
    ]
    # The crashed writer's versions are unreferenced but its Lance branch (main's head
    # state) lives on: only its head version stays (Lance never removes a head).
    crashed = info["crashed"]
    versions = lance_versions(g, crashed)
    assert crashed.version in versions and crashed.version - 1 not in versions
    assert g.repo.store.exists(
        f"_graphlake/claims/{tid}/{crashed.lance_branch}/{crashed.version:020d}"
    )

    # Everything reads the same, in a fresh process view (no cached datasets).
    fresh = reopen(g)
    assert everything(fresh) == before

    # And keeps working: a write, a merge (with a criss-cross history), another gc.
    write(fresh, "a", lambda w: w.update("Person", [{"name": "Carol", "age": 7}]))
    write(fresh, "b", lambda w: w.update("Person", [{"name": "Dan", "age": 8}]))
    assert fresh.merge("b", into="a", lineage="verify").outcome == "merged"
    fresh.create_branch("late")
    write(fresh, "late", lambda w: w.insert("Person", [{"name": "Late"}]))
    assert fresh.merge("late", into="main").outcome in ("merged", "fast_forward")
    assert fresh.get("Person", "Late") is not None
    later = everything(fresh)
    again = fresh.gc(grace=ZERO, reflog_keep=ZERO)
    assert not again.warnings
    assert everything(reopen(fresh)) == later


# --- grace and publications in flight -------------------------------------------------------


def test_nothing_younger_than_grace_is_removed(people: gl.Graph) -> None:
    g = people
    g.create_branch("tmp")
    write(g, "tmp", lambda w: w.insert("Person", [{"name": "Tmp"}]))
    g.delete_branch("tmp")
    files = objects(g)
    report = g.gc(grace=dt.timedelta(hours=1))
    assert (
        report.versions,
        report.files,
        report.lance_branches,
        report.commit_objects,
        report.claims,
    ) == (0, 0, 0, 0, 0)
    assert objects(g) == files
    # With no grace the same garbage goes.
    assert g.gc(grace=ZERO, reflog_keep=ZERO).lance_branches == 1


def test_a_publication_in_flight_bounds_what_is_removed(people: gl.Graph) -> None:
    g = people
    g.create_branch("old")
    write(g, "old", lambda w: w.insert("Person", [{"name": "Old"}]))
    g.delete_branch("old")
    records = RecordStore(g.repo.store)
    ref = g.repo.refs.head("main")
    record = records.begin("write", "main", ref.seq, ref.commit)  # this process: alive
    g.create_branch("young")
    write(g, "young", lambda w: w.insert("Person", [{"name": "Young"}]))
    young_lance = g.head("young").tables["Person"].lance_branch
    g.delete_branch("young")
    tid = person_table_id(g)

    report = g.gc(grace=ZERO, reflog_keep=ZERO)
    assert report.cutoff is not None and report.cutoff <= record.started_at
    assert report.lance_branches == 1  # "old"'s, made before the record started
    assert young_lance in lance_branches(g, tid)

    records.finish(record)
    report = g.gc(grace=ZERO, reflog_keep=ZERO)
    assert report.lance_branches == 1
    assert young_lance not in lance_branches(g, tid)


# --- zero-copy adoption ---------------------------------------------------------------------


def test_files_another_branch_adopted_are_never_removed(people: gl.Graph) -> None:
    """Even if the versions of the adopted source were not pinned (the safety net beneath
    reachability): cleaning the source branch must not delete what main reads."""
    g = people
    g.create_branch("dev")
    write(g, "dev", lambda w: w.insert("Person", [{"name": "D1"}]))
    write(g, "dev", lambda w: w.insert("Person", [{"name": "D2"}]))
    write(g, "main", lambda w: w.insert("Person", [{"name": "Eve"}]))  # no fast-forward
    result = g.merge("dev", into="main")
    assert result.stats["Person"].adopted_rows == 2
    dev_state = g.head("dev").tables["Person"]
    # dev goes on: its later head no longer holds the adopted files.
    write(g, "dev", lambda w: w.delete("Person", ["D1", "D2"]))
    g.optimize("dev")
    main_rows = read_all(reopen(g), "main")

    from graphlake.maintenance.roots import find_roots

    roots = find_roots(g.repo)
    pinned = {b: set(v) for b, v in roots.pinned[dev_state.table_id].items()}
    pinned.pop(dev_state.lance_branch)  # pretend no commit pins dev's versions
    warnings: list[str] = []
    now = dt.datetime.now(dt.UTC)
    sweep = TableSweep(g.repo, dev_state.table_id, "Person", pinned, now, warnings)
    table = sweep.run(dry_run=False)
    assert table.versions > 0  # something of dev was removed, just not those files
    assert dev_state.lance_branch not in table.lance_branches
    assert read_all(reopen(g), "main") == main_rows


# --- CLI ------------------------------------------------------------------------------------


def test_cli_gc_dry_run_json_and_summary(tmp_path) -> None:
    from tests.cli.helpers import run, run_all
    from tests.conftest import SOCIAL

    root = tmp_path / "g"
    g = gl.Graph.init(root, SOCIAL)
    g.create_branch("tmp")
    write(g, "tmp", lambda w: w.insert("Person", [{"name": "Tmp"}]))
    g.delete_branch("tmp")

    dry, kept, bad = run_all(
        ("gc", root, "--grace", "0s", "--reflog-keep", "0s", "--dry-run", "--json"),
        ("gc", root, "--dry-run", "--json"),  # default grace 1h: all of it is younger
        ("gc", root, "--grace", "soon"),
    )
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert planned["dry_run"] is True and planned["lance_branches"] == 1
    assert json.loads(kept.stdout)["lance_branches"] == 0
    assert bad.returncode == 2
    assert "not a duration" in bad.stderr

    done = run("gc", root, "--grace", "0s", "--reflog-keep", "0s")
    assert done.returncode == 0, done.stderr
    assert "gc removed:" in done.stdout and "1 Lance branch," in done.stdout
    assert "tmp" not in g.branches()
    assert g.gc(grace=ZERO, reflog_keep=ZERO, dry_run=True).lance_branches == 0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0), ("0s", 0), ("30m", 1800), ("1h", 3600), ("7d", 604_800), ("1h30m", 5400)],
)
def test_durations(text: str, seconds: int) -> None:
    from graphlake.cli.gc import parse_duration

    assert parse_duration(text) == dt.timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "h", "1x", "-1h", "1.5h", "1 h 2"])
def test_bad_durations(text: str) -> None:
    import typer

    from graphlake.cli.gc import parse_duration

    with pytest.raises(typer.BadParameter):
        parse_duration(text)
