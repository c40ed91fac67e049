"""`Graph.apply_schema`: every step kind on real tables, bad input, old commits intact."""

from __future__ import annotations

import pyarrow as pa
import pytest

import graphlake as gl
from graphlake.errors import (
    BranchNotFoundError,
    NotABranchError,
    SchemaChangeRefusedError,
    SchemaDataError,
    SchemaError,
    SchemaUnchangedError,
    StaleReadError,
)
from graphlake.schema.parser import parse_schema
from tests.conftest import SOCIAL, seed_people


def _all_rows(g: gl.Graph, revision: str, sql: bool = False) -> dict[str, list[dict]]:
    """Every table's rows at a revision, sorted by id (and the same through SQL)."""
    snap = g.snapshot(revision)
    out = {}
    for name in snap.schema.table_names:
        out[name] = sorted(snap.read(name).to_pylist(), key=lambda r: r["id"])
    if sql:
        query = " UNION ALL ".join(
            f"SELECT '{n}' AS t, COUNT(*) AS n, list(id ORDER BY id) AS ids FROM \"{n}\""
            for n in out
        )
        got = {r["t"]: r["ids"] or [] for r in g.sql(query, revision).to_pylist()}
        assert got == {n: [r["id"] for r in rows] for n, rows in out.items()}
    return out


# One evolution of SOCIAL per stage, each covering several step kinds.
STAGES = [
    # add nullable, add with default, rename, widen I32 -> I64, T -> T?, enum grows
    SOCIAL.replace(
        "age: I32? @range(0..150)",
        "years: I64? @range(0..150) @renamed_from(age)\n"
        '  nick: String?\n  lang: String @default("en")\n  score: F64 @default(1.5)',
    ).replace("role: enum(eng, pm, exec)?", "role: enum(eng, pm, exec, ops)?"),
    # rename a node type (edges follow), add a node and an edge type, add an index
    None,
    # drop a property and a constraint, narrow T? -> T and add constraints that hold
    None,
    # drop the added types again
    None,
]
STAGES[1] = (
    STAGES[0]
    .replace("node Company", "node Firm @renamed_from(Company)")
    .replace("-> Company", "-> Firm")
    .replace("nick: String?", "nick: String? @index")
    + "\nnode Place { code: String @key }\nedge LivesIn: Person -> Place\n"
)
STAGES[2] = (
    STAGES[1]
    .replace("  nick: String? @index\n", "")
    .replace('email: String? @unique @check("[^@]+@[^@]+")', "email: String?")
    .replace('lang: String @default("en")', 'lang: String @default("en") @unique')
    .replace(
        "edge WorksAt: Person -> Firm @card(0..1)",
        "edge WorksAt: Person -> Firm @card(0..1) { note: String? }",
    )
    .replace("score: F64 @default(1.5)", "score: F64 @default(1.5) @range(0..10)")
)
STAGES[3] = STAGES[2].replace(
    "\nnode Place { code: String @key }\nedge LivesIn: Person -> Place\n", "\n"
)


def test_every_step_kind_and_old_commits_read_the_same(backend) -> None:
    uri, options = backend
    g = gl.Graph.init(uri, SOCIAL, storage_options=options)
    seed_people(g)
    seen = {g.head().id: _all_rows(g, "main")}
    for i, text in enumerate(STAGES):
        if i == 2:  # only one person: lang @unique can hold
            with g.write() as w:
                w.delete("Person", ["Bob", "Carol", "Dan"], cascade=True)
            seen[g.head().id] = _all_rows(g, "main")
        plan = g.apply_schema(text, message=f"stage {i}", allow_drop=True)
        assert plan.commit is not None and g.head().id == plan.commit.id
        assert g.head().message == f"stage {i}"
        assert g.schema_text() == text
        assert g.schema.nodes == parse_schema(text).nodes
        seen[plan.commit.id] = _all_rows(g, "main", sql=True)
        if i == 0:
            alice = g.get("Person", "Alice")
            assert alice["years"] == 30 and alice["lang"] == "en" and alice["score"] == 1.5
            assert alice["nick"] is None and "age" not in alice
            assert g.nodes("Person").schema.field("years").type == pa.int64()
            with g.write() as w:  # writes use the new schema
                w.insert("Person", [{"name": "Dan", "years": 5, "role": "ops"}])
            seen[g.head().id] = _all_rows(g, "main")
        if i == 1:
            assert g.get("Firm", "Acme")["founded"] is not None
            assert "Company" not in g.schema.nodes
            assert g.edges("WorksAt").num_rows == 1
            with g.write() as w:
                w.insert("Place", [{"code": "x"}])
                w.insert("LivesIn", [{"src": "Alice", "dst": "x"}])
            seen[g.head().id] = _all_rows(g, "main")
    assert "Place" not in g.schema.nodes and "email" in g.schema.nodes["Person"].property_names
    # Every commit, before and after each change, reads exactly as it did.
    for commit_id, rows in seen.items():
        assert _all_rows(g, commit_id, sql=True) == rows, commit_id
    assert g.schema_at(next(iter(seen))).nodes == parse_schema(SOCIAL).nodes
    report = gl.Graph.open(uri, storage_options=options).fsck()
    assert report.ok, report.problems


@pytest.fixture
def people(tmp_path) -> gl.Graph:
    g = gl.Graph.init(str(tmp_path / "g"), SOCIAL)
    with g.write() as w:
        w.insert("Person", [{"name": f"p{i:02d}", "age": i % 3} for i in range(25)])
        w.insert("Person", [{"name": "full", "age": 9, "email": "a@b.c", "role": "pm"}])
        w.insert("Company", [{"name": "Acme"}])
        w.insert("WorksAt", [{"src": "p00", "dst": "Acme"}])
        w.insert("Knows", [{"src": "p00", "dst": "p01"}, {"src": "p00", "dst": "p02"}])
    return g


@pytest.mark.parametrize(
    ("old", "new", "first_keys"),
    [
        ("age: I32? @range(0..150)", "age: I32 @range(0..150)", None),  # 0 of 26 null: ok
        ("email: String?", "email: String", ["p00", "p01"]),
        ("role: enum(eng, pm, exec)?", "role: enum(eng, exec)?", ["full"]),
        ("age: I32? @range(0..150)", "age: I32? @range(1..150)", ["p00", "p03"]),
        ("age: I32? @range(0..150)", "age: I32? @range(0..150) @unique", ["p03", "p04"]),
        # Company's key is also `name`: Acme is checked (and reported) first.
        ("name: String @key", 'name: String @key @check("p.*")', ["Acme"]),
        ("since: Date?", "since: Date? }\nedge X: Person -> Person @card(0..1) {", None),
        ("edge Knows: Person -> Person", "edge Knows: Person -> Person @card(0..1)", ["p00"]),
        (
            "edge WorksAt: Person -> Company @card(0..1)",
            "edge WorksAt: Person -> Company @card(1..1)",
            ["full", "p01"],
        ),
    ],
)
def test_data_that_breaks_a_step_is_named_and_nothing_changes(
    people: gl.Graph, old: str, new: str, first_keys: list[str] | None
) -> None:
    g = people
    head = g.head().id
    text = SOCIAL.replace(old, new)
    assert text != SOCIAL
    if first_keys is None:
        g.apply_schema(text)
        assert g.head().id != head
        return
    with pytest.raises(SchemaDataError) as info:
        g.apply_schema(text)
    assert set(first_keys) <= set(info.value.keys)
    assert len(info.value.keys) <= 20
    assert "nothing was published" in str(info.value)
    with pytest.raises(SchemaDataError):  # a dry run checks the data too
        g.apply_schema(text, dry_run=True)
    assert g.head().id == head and g.schema_text() == SOCIAL


def test_offending_keys_are_capped_at_20(people: gl.Graph) -> None:
    with pytest.raises(SchemaDataError, match="25 row") as info:
        people.apply_schema(SOCIAL.replace("email: String?", "email: String"))
    assert len(info.value.keys) == 20 and "and 5 more" in str(info.value)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (("name: String @key", "name: String @key  x: I64"), SchemaChangeRefusedError, "nullable"),
        (("age: I32?", "age: F64?"), SchemaChangeRefusedError, "add a new property"),
        (
            ("node Company { name: String @key", "node Company { name: I64 @key"),
            SchemaChangeRefusedError,
            "key",
        ),
        (("node Person {", "node Person {\n  v: Vector(3)?"), None, None),
        (("node Person {", "node Person {\n  oops"), SchemaError, "line 5, column 3"),
    ],
)
def test_refused_changes_leave_the_branch_unchanged(
    people: gl.Graph, change: tuple[str, str], error: type | None, message: str | None
) -> None:
    g = people
    head = g.head().id
    text = SOCIAL.replace(*change)
    if error is None:
        g.apply_schema(text)
        text = text.replace("Vector(3)", "Vector(4)")
        error, message = SchemaChangeRefusedError, "dimension"
        head = g.head().id
    with pytest.raises(error, match=message):
        g.apply_schema(text)
    assert g.head().id == head


def test_unknown_branch_commit_revision_and_equal_schema(people: gl.Graph) -> None:
    g = people
    head = g.head()
    with pytest.raises(BranchNotFoundError):
        g.apply_schema(SOCIAL, "nope")
    with pytest.raises(NotABranchError):
        g.apply_schema(SOCIAL, head.id)
    with pytest.raises(SchemaUnchangedError, match="nothing was published"):
        g.apply_schema("// same model, new layout\n" + SOCIAL.replace("  ", "    "))
    plan = g.apply_schema(SOCIAL, dry_run=True)
    assert plan.steps == [] and plan.commit is None
    with pytest.raises(SchemaError, match="larger than"):
        g.apply_schema("node A { k: String @key }" + " " * (1 << 20))
    assert g.head() == head


def test_widening_an_indexed_column_rebuilds_its_index(people: gl.Graph) -> None:
    g = people
    text = SOCIAL.replace("age: I32? @range(0..150)", "age: I32? @range(0..150) @index")
    g.apply_schema(text)
    g.apply_schema(text.replace("age: I32?", "age: I64?"))
    assert g.nodes("Person", where="age = 2").num_rows == 8
    assert g.nodes("Person").schema.field("age").type == pa.int64()


def test_dry_run_plans_without_publishing(people: gl.Graph) -> None:
    g = people
    head = g.head().id
    plan = g.apply_schema(SOCIAL.replace("age: I32?", "age: I64?"), dry_run=True)
    assert [s.kind for s in plan.steps] == ["widen_property"]
    assert plan.cost == "column" and plan.commit is None
    assert g.head().id == head


def test_a_branch_schema_is_its_own(people: gl.Graph) -> None:
    g = people
    g.create_branch("dev")
    text = SOCIAL.replace("founded: Date?", "founded: Date? url: String?")
    g.apply_schema(text, "dev")
    assert g.schema_text("dev") == text and g.schema_text("main") == SOCIAL
    assert "url" not in g.schema.nodes["Company"].property_names  # g.schema: main's
    with g.write("dev") as w:
        w.upsert("Company", [{"name": "Acme", "url": "https://acme"}])
    with g.write("main") as w:
        w.upsert("Company", [{"name": "Acme", "founded": "2001-02-03"}])
    assert g.get("Company", "Acme", "dev")["url"] == "https://acme"
    assert "url" not in g.get("Company", "Acme", "main")
    assert list(g.log("dev", limit=2)[1].meta["schema_change"]) == ["add_property"]


def test_rows_staged_before_a_schema_change_are_refused(people: gl.Graph) -> None:
    g = people
    w = g.write()
    w.insert("Company", [{"name": "Initech"}])
    g.apply_schema(SOCIAL.replace("founded: Date?", "founded: Date? url: String?"))
    with pytest.raises(StaleReadError, match="schema"):
        w.commit_now()
    assert g.get("Company", "Initech") is None


def test_diff_reports_schema_changes_first_and_only_real_row_changes(people: gl.Graph) -> None:
    g = people
    before = g.head().id
    text = SOCIAL.replace(
        "age: I32? @range(0..150)", "years: I32? @range(0..150) @renamed_from(age)  nick: String?"
    )
    g.apply_schema(text)
    with g.write() as w:
        w.update("Person", [{"name": "p01", "nick": "one"}])
        w.insert("Person", [{"name": "new"}])
    d = g.diff(before, "main")
    assert [s.kind for s in d.schema_changes] == ["rename_property", "add_property"]
    person = d["Person"]
    assert person.counts == {"inserted": 1, "updated": 1, "deleted": 0}
    assert person.changes == {"p01": {"nick": (None, "one")}}
    back = g.diff("main", before)  # the other way round: renamed back, nick dropped
    assert [s.kind for s in back.schema_changes] == ["drop_property", "rename_property"]
    assert back["Person"].counts == {"inserted": 0, "updated": 0, "deleted": 1}
    assert not g.diff(before, before).schema_changes


def test_defaults_fill_new_rows_that_leave_the_property_out(tmp_path) -> None:
    text = SOCIAL.replace(
        "name: String @key\n  age", 'name: String @key\n  lang: String @default("en")\n  age'
    )
    g = gl.Graph.init(str(tmp_path / "g"), text)
    with g.write() as w:
        w.insert("Person", [{"name": "a"}, {"name": "b", "lang": "fr"}])
        w.upsert("Person", [{"name": "c", "age": 3}])
    with g.write() as w:
        w.upsert("Person", [{"name": "b", "age": 4}])  # an existing row keeps its value
    assert {r["name"]: r["lang"] for r in g.nodes("Person").to_pylist()} == {
        "a": "en",
        "b": "fr",
        "c": "en",
    }
