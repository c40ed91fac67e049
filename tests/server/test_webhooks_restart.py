"""A real `graphlake serve` process with a `[[webhooks]]` entry, killed (SIGKILL) while
it waits on a delivery: after a restart it delivers the rest. Every event arrives at
least once, none is lost, each signature verifies at the receiver (hmac, not our code),
and a repeat carries the same delivery id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphlake as gl
from tests.server.harness import Server
from tests.server.webhook_receiver import Receiver

SECRET = "restart-secret-8d2f6a0c4e"
SCHEMA = "node Person { name: String @key\n age: I32? }\n"
ADMIN = "admin-token-restart-5b7d9f1a3c"
COMMITS = 6
DELIVERED_BEFORE_KILL = 2


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(SECRET)
    yield r
    r.close()


def _config(path: Path, url: str) -> Path:
    hook = {
        "name": "restart",
        "url": url,
        "secret": SECRET,
        "events": ["commit", "tag"],
        "branches": ["main"],
        "poll_interval_s": 0.1,
        "backoff_s": 0.05,
        "retry_pause_s": 0.2,
        "timeout_s": 60,
    }
    path.write_text(
        json.dumps({"tokens": [{"token": ADMIN, "scope": "admin"}], "webhooks": [hook]})
    )
    return path


def _write(g: gl.Graph, n: int) -> str:
    with g.write(message=f"write {n}") as w:
        w.upsert("Person", [{"name": f"P{n}", "age": n}])
    return g.head("main").id


@pytest.mark.slow  # two server start-ups: 10-20 s on the 2-core machine
def test_a_server_killed_mid_delivery_delivers_the_rest_after_restart(
    tmp_path: Path, receiver: Receiver
) -> None:
    root = tmp_path / "g"
    g = gl.Graph.init(root, SCHEMA)
    _write(g, 0)  # written before the webhook starts: not announced
    config = _config(tmp_path / "server.json", receiver.url)
    server = Server(root, tmp_path, ["--config", str(config)])
    server.start()
    try:
        # The webhook takes its starting position at start-up, before any request.
        assert server.client().get("/health").status_code == 200
        receiver.hold_from = DELIVERED_BEFORE_KILL  # the third POST hangs
        receiver.hold.clear()
        ids = [_write(g, n) for n in range(1, COMMITS + 1)]
        g.tag("v1", "main")
        assert receiver.holding.wait(30), server.log()
        assert [r.body["commit"] for r in receiver.received] == ids[:DELIVERED_BEFORE_KILL]
        assert server.proc is not None
        server.proc.kill()  # SIGKILL: no shutdown hook runs
        server.proc.wait(15)
        receiver.hold_from = None
        receiver.hold.set()  # the hung POST completes: taken, but the server never knew
        receiver.wait_for(lambda: len(receiver.received) > DELIVERED_BEFORE_KILL, 10)

        server.start()
        receiver.wait_for(lambda: receiver.commits() and set(receiver.commits()) >= set(ids), 60)
        receiver.wait_for(lambda: any(r.event == "tag" for r in receiver.received), 30)
        with server.client(ADMIN) as client:
            logged = client.get("/webhooks/deliveries", params={"webhook": "restart"}).json()
    finally:
        server.stop()

    got = receiver.received
    assert all(r.verified for r in got), [r.signature for r in got if not r.verified]
    commits = [r.body["commit"] for r in got if r.event == "commit"]
    assert set(commits) == set(ids)  # none lost, nothing from before the start
    first_seen = list(dict.fromkeys(commits))
    assert first_seen == ids  # in first-parent order
    # At least once: the hung delivery came again after the restart, under its own id.
    assert commits.count(ids[DELIVERED_BEFORE_KILL]) == 2
    by_commit: dict[str, set[str]] = {}
    for r in got:
        if r.event == "commit":
            by_commit.setdefault(r.body["commit"], set()).add(r.delivery)
    assert all(len(d) == 1 for d in by_commit.values())
    [tag] = [r for r in got if r.event == "tag"]
    assert tag.body["tag"] == "v1" and tag.body["commit"] == ids[-1]
    statuses = {d["commit"]: d["status"] for d in logged["deliveries"] if d["event"] == "commit"}
    assert statuses == dict.fromkeys(ids, "delivered")
