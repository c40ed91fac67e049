"""Webhooks in process: config errors, signatures, and the engine's events against a real
receiver on 127.0.0.1 (one `poll_once` at a time, so no test waits on a timer)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphlake as gl
from graphlake.server.config import (
    ConfigError,
    Webhook,
    WebhookConfigError,
    load_config,
)
from graphlake.server.webhooks import signing
from graphlake.server.webhooks.engine import WebhookWorker
from graphlake.server.webhooks.log import read_deliveries
from tests.server.webhook_receiver import Receiver

SECRET = "webhook-secret-5f3a9c1e7b"
SCHEMA = "node Person { name: String @key\n age: I32? }\n"


# --- config -------------------------------------------------------------------------


def _config(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "server.json"
    path.write_text(json.dumps({"webhooks": entries}))
    return path


def test_config_parses_an_entry_with_defaults(tmp_path: Path) -> None:
    cfg = load_config(
        _config(
            tmp_path,
            [
                {"url": "https://ci.example.org/hook", "secret": SECRET, "branches": ["main"]},
                {
                    "url": "http://127.0.0.1:9/x",
                    "secret": SECRET,
                    "events": ["tag"],
                    "name": "t",
                    "max_attempts": 2,
                    "timeout_s": 0.5,
                },
            ],
        ),
        no_auth=True,
    )
    first, second = cfg.webhooks
    assert first.events == ("commit", "merge", "tag", "merge_request")
    assert first.branches == ("main",) and first.name.startswith("hook-")
    assert (second.name, second.events, second.max_attempts, second.timeout_s) == (
        "t",
        ("tag",),
        2,
        0.5,
    )
    assert SECRET not in repr(cfg.webhooks)


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"url": "ftp://example.org/x", "secret": SECRET}, ["entry 1", "http"]),
        ({"url": "example.org/hook", "secret": SECRET}, ["entry 1", "http"]),
        ({"url": "https://", "secret": SECRET}, ["entry 1", "host"]),
        ({"url": 5, "secret": SECRET}, ["entry 1", "url"]),
        (
            {"url": "https://e.org/h", "secret": SECRET, "events": ["commit", "push"]},
            ["entry 1", "'push'", "unknown event"],
        ),
        ({"url": "https://e.org/h", "secret": SECRET, "events": []}, ["events"]),
        ({"url": "https://e.org/h"}, ["entry 1", "secret"]),
        ({"url": "https://e.org/h", "secret": "short"}, ["entry 1", "16"]),
        ({"url": "https://e.org/h", "secret": SECRET, "branches": "main"}, ["branches"]),
        ({"url": "https://e.org/h", "secret": SECRET, "max_attempts": 0}, ["max_attempts"]),
        ({"url": "https://e.org/h", "secret": SECRET, "name": "a/b"}, ["name"]),
        ({"url": "https://e.org/h", "secret": SECRET, "retries": 3}, ["unknown key", "retries"]),
    ],
)
def test_config_refuses_a_bad_entry_naming_it(
    tmp_path: Path, entry: dict, words: list[str]
) -> None:
    ok = {"url": "https://ok.example.org/h", "secret": SECRET}
    with pytest.raises(WebhookConfigError) as info:
        load_config(
            _config(tmp_path, [ok, entry] if "entry 1" not in words else [entry]), no_auth=True
        )
    assert isinstance(info.value, ConfigError)
    for word in words:
        assert word in str(info.value)
    assert SECRET not in str(info.value)


def test_config_error_never_shows_url_credentials(tmp_path: Path) -> None:
    with pytest.raises(WebhookConfigError) as info:
        load_config(
            _config(tmp_path, [{"url": "https://user:pa55word@e.org/h", "secret": "short"}]),
            no_auth=True,
        )
    assert "pa55word" not in str(info.value) and "e.org/h" in str(info.value)


def test_config_refuses_two_entries_with_one_name(tmp_path: Path) -> None:
    entry = {"url": "https://e.org/h", "secret": SECRET}
    with pytest.raises(WebhookConfigError, match=r"entry 2.*distinct name"):
        load_config(_config(tmp_path, [entry, entry]), no_auth=True)


def test_config_refuses_webhooks_that_are_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"webhooks": {"url": "https://e.org"}}))
    with pytest.raises(WebhookConfigError, match="list"):
        load_config(path, no_auth=True)


# --- signing --------------------------------------------------------------------------


def test_signature_is_hmac_sha256_of_the_exact_body() -> None:
    body = '{"b":1,"a":"é"}'.encode()
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert signing.sign(body, SECRET) == f"sha256={expected}"
    assert signing.verify(body, SECRET, f"sha256={expected}")
    assert not signing.verify(body + b" ", SECRET, f"sha256={expected}")
    assert not signing.verify(body, SECRET + "x", f"sha256={expected}")
    assert not signing.verify(body, SECRET, None)


# --- the engine -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver(SECRET)
    yield r
    r.close()


@pytest.fixture
def graph(tmp_path: Path) -> gl.Graph:
    g = gl.Graph.init(tmp_path / "g", SCHEMA)
    _write(g, "main", "Ann", 1)
    return g


def _write(g: gl.Graph, branch: str, name: str, age: int) -> str:
    with g.write(branch, message=f"set {name}") as w:
        w.upsert("Person", [{"name": name, "age": age}])
    return g.head(branch).id


def _hook(url: str, **kw: object) -> Webhook:
    fields = {
        "name": "t",
        "url": url,
        "secret": SECRET,
        "backoff_s": 0.01,
        "retry_pause_s": 0.05,
        "timeout_s": 5.0,
        **kw,
    }
    return Webhook(**fields)  # type: ignore[arg-type]


@pytest.fixture
def fresh(receiver: Receiver) -> Receiver:
    receiver.received.clear()
    receiver.fail_next, receiver.delay_s = 0, 0.0
    return receiver


def test_commits_after_start_are_delivered_in_order_and_signed(
    graph: gl.Graph, fresh: Receiver
) -> None:
    worker = WebhookWorker(graph, _hook(fresh.url))
    worker.poll_once()  # takes the current heads as its start: nothing is sent
    assert fresh.received == []
    ids = [_write(graph, "main", "Bob", i) for i in range(3)]
    worker.poll_once()
    assert fresh.commits() == ids
    first = fresh.received[0]
    assert all(r.verified for r in fresh.received)
    assert first.event == "commit" and first.body["event"] == "commit"
    assert first.body["branch"] == "main" and first.body["op"] == "write"
    assert first.body["parents"] == [graph.log("main")[3].id]
    assert first.body["message"] == "set Bob" and first.body["tables_changed"] == ["Person"]
    assert first.body["moved_by"] == "write"
    assert {"author", "time"} <= set(first.body)
    assert len({r.delivery for r in fresh.received}) == 3
    worker.poll_once()  # nothing new: nothing sent again
    assert len(fresh.received) == 3


def test_branch_patterns_and_event_names_filter(graph: gl.Graph, fresh: Receiver) -> None:
    worker = WebhookWorker(
        graph, _hook(fresh.url, branches=("main", "dev/*"), events=("merge", "tag"))
    )
    worker.poll_once()
    graph.create_branch("dev/a")
    graph.create_branch("other")
    on_dev = _write(graph, "dev/a", "Cy", 1)
    _write(graph, "other", "Di", 1)
    result = graph.merge("dev/a", "main")  # a fast-forward: a commit event, not a merge
    assert result.commit == on_dev
    _write(graph, "other", "Ed", 2)
    graph.merge("other", "main")  # a merge commit on main
    graph.tag("v1", "main")
    worker.poll_once()
    assert [r.event for r in fresh.received] == ["merge", "tag"]
    merge, tag = (r.body for r in fresh.received)
    assert merge["branch"] == "main" and merge["op"] == "merge"
    assert len(merge["parents"]) == 2 and merge["commit"] == graph.head("main").id
    assert tag["tag"] == "v1" and tag["commit"] == graph.head("main").id
    assert all(r.verified for r in fresh.received)


def test_a_new_branch_is_followed_from_its_creation(graph: gl.Graph, fresh: Receiver) -> None:
    worker = WebhookWorker(graph, _hook(fresh.url, branches=("dev/*",)))
    worker.poll_once()
    graph.create_branch("dev/new")
    ids = [_write(graph, "dev/new", "Fe", i) for i in range(2)]
    worker.poll_once()  # first sight of dev/new: its two commits, not main's history
    assert fresh.commits("dev/new") == ids and len(fresh.received) == 2


def test_a_reset_past_the_cursor_goes_on_from_the_new_head(
    graph: gl.Graph, fresh: Receiver
) -> None:
    worker = WebhookWorker(graph, _hook(fresh.url))
    worker.poll_once()
    start = graph.head("main").id
    _write(graph, "main", "Gi", 1)
    worker.poll_once()
    assert len(fresh.commits()) == 1
    graph.reset_branch("main", start)  # backwards, past the delivered commit
    worker.poll_once()
    assert len(fresh.commits()) == 1  # nothing new, no crash
    after = _write(graph, "main", "Ho", 1)
    worker.poll_once()
    assert fresh.commits()[1:] == [after]


def test_a_failing_receiver_is_retried_and_logged(graph: gl.Graph, fresh: Receiver) -> None:
    worker = WebhookWorker(graph, _hook(fresh.url, max_attempts=2))
    worker.poll_once()
    commit = _write(graph, "main", "Io", 1)
    fresh.fail_next = 3  # two attempts fail (a round: failed), a pause, one more fails
    worker.poll_once()
    assert fresh.commits() == [commit]
    [logged] = read_deliveries(graph.repo.store, ["t"], 10)
    assert (logged.status, logged.attempts, logged.commit) == ("delivered", 4, commit)
    assert logged.id == fresh.received[0].delivery and logged.last_error is None


def test_the_cursor_survives_a_new_worker(graph: gl.Graph, fresh: Receiver) -> None:
    WebhookWorker(graph, _hook(fresh.url)).poll_once()
    ids = [_write(graph, "main", "Jo", i) for i in range(2)]
    WebhookWorker(graph, _hook(fresh.url)).poll_once()  # "after a restart"
    assert fresh.commits() == ids


def test_a_dead_receiver_is_failed_in_the_log_and_holds_position(
    graph: gl.Graph, fresh: Receiver
) -> None:
    dead = "http://127.0.0.1:9/hook"  # discard port: connection refused
    # One failed round, then the pause between rounds, which the stop cuts short.
    worker = WebhookWorker(graph, _hook(dead, max_attempts=2, retry_pause_s=30))
    worker.poll_once()
    commit = _write(graph, "main", "Ka", 1)
    stopper = threading.Timer(0.5, worker._stop.set)
    stopper.start()
    worker.poll_once()  # retries until stopped
    [logged] = read_deliveries(graph.repo.store, ["t"], 10)
    assert logged.status == "failed" and logged.attempts >= 2 and logged.commit == commit
    assert logged.last_error
    again = WebhookWorker(graph, _hook(fresh.url))  # the receiver is back
    again.poll_once()
    assert fresh.commits() == [commit]


# --- merge requests -------------------------------------------------------------------


def _requests(r: Receiver) -> list[dict]:
    return [x.body for x in r.received if x.event == "merge_request"]


def test_merge_request_events_are_delivered_in_order_and_signed(
    graph: gl.Graph, fresh: Receiver
) -> None:
    graph.create_branch("dev/a")
    before = graph.reviews.open("dev/a", "main", "existing", author="ann")
    worker = WebhookWorker(graph, _hook(fresh.url, events=("merge_request",)))
    worker.poll_once()  # requests that exist at start are taken as they stand
    assert fresh.received == []
    graph.reviews.comment(before.id, "still here", by="bob")  # a new event of an old one
    _write(graph, "dev/a", "Lu", 3)
    mr = graph.reviews.open("dev/a", "main", "add Lu", "please", author="ann")
    graph.reviews.approve(mr.id, by="bob")
    graph.reviews.comment(mr.id, "looks right", by="cy")
    merged = graph.reviews.merge(mr.id, by="bob")
    worker.poll_once()
    got = _requests(fresh)
    assert [(b["request"], b["action"]) for b in got] == [
        (before.id, "commented"),
        (mr.id, "opened"),
        (mr.id, "approved"),
        (mr.id, "commented"),
        (mr.id, "merged"),
    ]
    assert all(r.verified for r in fresh.received)
    opened, approved, commented, done = got[1:]
    assert (opened["title"], opened["source"], opened["into"]) == ("add Lu", "dev/a", "main")
    assert opened["description"] == "please" and opened["by"] == "ann"
    assert opened["state"] == "open" and opened["seq"] == 1
    assert approved["by"] == "bob" and approved["target_head"]
    assert commented["text"] == "looks right" and commented["by"] == "cy"
    assert done["state"] == "merged" and done["commit"] == merged.merge_commit
    assert done["commit"] == graph.head("main").id
    assert len({r.delivery for r in fresh.received}) == 5
    logged = [d for d in read_deliveries(graph.repo.store, ["t"], 20) if d.event == "merge_request"]
    assert {d.status for d in logged} == {"delivered"} and len(logged) == 5
    assert {d.branch for d in logged} == {"main"}
    worker.poll_once()  # nothing new: nothing sent again
    assert len(fresh.received) == 5


def test_merge_request_events_filter_by_event_name_and_target_branch(
    graph: gl.Graph, fresh: Receiver
) -> None:
    for name in ("dev/b", "other", "feature"):
        graph.create_branch(name)
    only_commits = WebhookWorker(graph, _hook(fresh.url, name="c", events=("commit",)))
    to_other = WebhookWorker(graph, _hook(fresh.url, name="o", branches=("other",)))
    only_commits.poll_once()
    to_other.poll_once()
    into_main = graph.reviews.open("dev/b", "main", "into main", author="ann")
    into_other = graph.reviews.open("feature", "other", "into other", author="ann")
    graph.reviews.close(into_main.id, by="ann")
    graph.reviews.close(into_other.id, by="ann")
    only_commits.poll_once()
    assert fresh.received == []
    to_other.poll_once()
    assert [(b["request"], b["action"], b["state"]) for b in _requests(fresh)] == [
        (into_other.id, "opened", "open"),
        (into_other.id, "closed", "closed"),
    ]


def test_merge_request_events_resume_after_a_restart_at_least_once(
    graph: gl.Graph, fresh: Receiver
) -> None:
    graph.create_branch("dev/c")
    WebhookWorker(graph, _hook(fresh.url, events=("merge_request",))).poll_once()
    mr = graph.reviews.open("dev/c", "main", "resume", author="ann")
    for n in range(3):
        graph.reviews.comment(mr.id, f"note {n}", by="bob")
    stopping = WebhookWorker(graph, _hook(fresh.url, events=("merge_request",)))
    original = stopping._sender.deliver
    sent: list[str] = []

    def deliver_then_stop(event):  # type: ignore[no-untyped-def]
        sent.append(event.payload["action"])
        if len(sent) == 3:
            stopping._stop.set()  # "killed" before the third event was taken
            return False
        return original(event)

    stopping._sender.deliver = deliver_then_stop  # type: ignore[method-assign]
    stopping.poll_once()
    assert [b["seq"] for b in _requests(fresh)] == [1, 2]
    WebhookWorker(graph, _hook(fresh.url, events=("merge_request",))).poll_once()  # restart
    assert [b["seq"] for b in _requests(fresh)] == [1, 2, 3, 4]
    assert [b["action"] for b in _requests(fresh)] == ["opened"] + ["commented"] * 3


def test_a_cursor_saved_before_requests_were_followed_starts_from_now(
    graph: gl.Graph, fresh: Receiver
) -> None:
    from graphlake.server.webhooks.cursor import CursorStore

    graph.create_branch("dev/d")
    WebhookWorker(graph, _hook(fresh.url)).poll_once()
    store = CursorStore(graph.repo.store, "t")
    seq, state = store.load()  # type: ignore[misc]
    state.requests = None  # as an older server saved it
    store.save(state, seq)
    graph.reviews.open("dev/d", "main", "older", author="ann")
    worker = WebhookWorker(graph, _hook(fresh.url))
    worker.poll_once()
    assert _requests(fresh) == []  # existing requests are not replayed
    mr = graph.reviews.open("dev/d", "main", "newer", author="ann")
    worker.poll_once()
    assert [(b["request"], b["action"]) for b in _requests(fresh)] == [(mr.id, "opened")]
