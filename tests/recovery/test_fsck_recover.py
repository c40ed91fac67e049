"""fsck finds each kind of damage and changes nothing; recovery settles only what a dead
process left (live owners, other hosts within the lease, and corrupt records are left
alone); the CLI commands report both."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.catalog.commits import Commit, format_time
from graphlake.recovery.records import RecordStore
from graphlake.recovery.recover import ROLLED_BACK
from tests.cli.helpers import run
from tests.conftest import reopen, state


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _orphan_record(g: gl.Graph, **changes):
    """A record as a crashed process would leave it (its owner is gone)."""
    store = RecordStore(g.repo.store)
    record = store.begin("write", "main", g.repo.refs.head("main").seq, g.head().id)
    record = dataclasses.replace(record, pid=_dead_pid(), process_start="", **changes)
    g.repo.store.put(record.key, record.to_json())
    return record


def _publish_unchecked(g: gl.Graph, table: str, rows: list[dict]) -> None:
    """Append rows without any validation (what a bug or a foreign tool could do)."""
    ref, head = g.repo.branch_head("main")
    st = head.tables[table]
    if st.owner != ref.incarnation:
        st = g.repo.tables.fork(st, owner=ref.incarnation)
    ds = g.repo.tables.open(st)
    data = pa.Table.from_pylist(rows, schema=ds.schema)
    new = g.repo.tables.apply(st, None, False, data, [])
    commit = Commit.create(
        parents=(head.id,),
        message="unchecked",
        schema_id=head.schema_id,
        tables={**head.tables, table: new},
    )
    g.repo.commits.put(commit)
    g.repo.refs.cas("main", ref, commit.id)


def test_fsck_is_clean_on_a_healthy_graph(people: gl.Graph) -> None:
    people.create_branch("dev")
    with people.write("dev") as w:
        w.update("Person", [{"name": "Bob", "age": 41}])
    with people.write() as w:
        w.insert("Company", [{"name": "Initech"}])
    assert people.merge("dev", "main").outcome == "merged"
    report = people.fsck()
    assert report.ok, report.problems
    # init, seed, dev's write, main's write, the merge; both heads' rows.
    assert (report.branches, report.commits) == (2, 5)
    assert report.rows == 8 + 7


def test_fsck_reports_duplicate_keys_and_orphan_edges(people: gl.Graph) -> None:
    _publish_unchecked(people, "Person", [{"id": "Bob", "name": "Bob", "age": 1}])
    _publish_unchecked(people, "Knows", [{"id": "k9", "src": "Alice", "dst": "Ghost"}])
    before = state(people)
    report = people.fsck()
    messages = [p.message for p in report.problems]
    assert any("duplicate keys: 'Bob'" in m for m in messages), messages
    assert any("Ghost" in m for m in messages), messages
    assert {p.check for p in report.problems} == {"data"}
    assert state(reopen(people)) == before  # fsck changed nothing


def test_fsck_reports_a_missing_commit_and_an_unclaimed_moved_branch(people: gl.Graph) -> None:
    if people.uri.startswith("s3://"):
        pytest.skip("removes files by path")
    people.create_branch("gone")
    with people.write("gone") as w:
        w.insert("Person", [{"name": "Dan"}])
    lost = people.head("gone").id
    people.repo.store.delete(people.repo.commits.key(lost))
    # A Lance version past the published head, and (unlike any real writer) no claim.
    head = people.head("main")
    st = head.tables["Company"]
    people.repo.tables.apply(
        st,
        None,
        False,
        pa.Table.from_pylist(
            [{"id": "X", "name": "X", "founded": None}], schema=people.repo.tables.open(st).schema
        ),
        [],
    )
    people.repo.store.delete(
        f"_graphlake/claims/{st.table_id}/{st.lance_branch}/{st.version + 1:020d}"
    )
    report = gl.Graph.open(people.uri).fsck()
    checks = {p.check: p for p in report.problems}
    assert lost in checks["refs"].message
    assert "not claimed" in checks["ownership"].message


def test_fsck_and_open_handle_records_of_dead_processes(people: gl.Graph) -> None:
    record = _orphan_record(people)
    report = gl.Graph.open(people.uri, people.storage_options, recover=False).fsck()
    assert [p.check for p in report.problems] == ["recovery"]
    assert "run `graphlake recover`" in report.problems[0].message
    g = reopen(people)  # open settles it: nothing was published
    assert RecordStore(g.repo.store).list() == []
    assert g.fsck().ok
    assert g.repo.refs.head("main").seq == record.expected_seq


def test_a_live_owner_is_left_alone_unless_forced(people: gl.Graph) -> None:
    record = RecordStore(people.repo.store).begin("merge", "main", 1, people.head().id)
    g = reopen(people)
    assert [r.id for r in RecordStore(g.repo.store).list()] == [record.id]
    report = g.recover()
    assert report.in_flight == [record.id] and not report.recovered
    assert g.fsck().ok  # a publication in flight is not a problem
    forced = g.recover(force=True)
    assert [(r.record, r.outcome) for r in forced.recovered] == [(record.id, ROLLED_BACK)]


def test_records_from_another_host_wait_for_the_lease(people: gl.Graph) -> None:
    fresh = _orphan_record(people, host="elsewhere")
    old = _orphan_record(
        people, host="elsewhere", started=format_time(datetime.now(UTC) - timedelta(hours=7))
    )
    report = gl.Graph.open(people.uri, people.storage_options, recover=False).recover()
    assert report.in_flight == [fresh.id]
    assert [r.record for r in report.recovered] == [old.id]


def test_a_corrupt_record_is_reported_not_guessed_at(people: gl.Graph) -> None:
    people.repo.store.put("_graphlake/recovery/broken.json", b"{not json")
    g = reopen(people)  # opening still works
    assert g.recover().corrupt == ["_graphlake/recovery/broken.json"]
    assert [p.check for p in g.fsck().problems] == ["recovery"]
    assert people.repo.store.get("_graphlake/recovery/broken.json") is not None


def test_cli_fsck_and_recover(tmp_path, schema_text: str) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, schema_text)
    with g.write() as w:
        w.insert("Person", [{"name": "Alice"}])
    ok = run("fsck", root)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: checked 1 branch"), ok.stderr
    assert run("recover", root).stdout.strip() == "nothing to recover"

    _orphan_record(g)
    bad = run("fsck", root, "--json")
    assert bad.returncode == 1
    assert [p["check"] for p in json.loads(bad.stdout)["problems"]] == ["recovery"]
    rec = run("recover", root)
    assert rec.returncode == 0 and "write on 'main': rolled back" in rec.stdout
    assert run("fsck", root).returncode == 0

    g.repo.store.put("_graphlake/recovery/broken.json", b"{")
    broken = run("recover", root, "--json")
    assert broken.returncode == 1
    assert json.loads(broken.stdout)["corrupt"] == ["_graphlake/recovery/broken.json"]
