"""A webhook receiver on 127.0.0.1 for the tests: records each POST and checks its
signature with the shared secret, the way a real receiver would (hmac, not our code)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    event: str
    delivery: str
    signature: str
    verified: bool
    body: dict[str, Any]


class Receiver:
    """`fail_next`: answer that many POSTs with 500; `hold`: while clear, every POST
    waits for it (a receiver that hangs); `hold_from`: once that many POSTs were
    recorded, the next ones wait for `hold` too (`holding` is set while one waits);
    `delay_s`: sleep before answering."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[Received] = []
        self.arrived = threading.Event()  # set on each POST's arrival (before answering)
        self.fail_next = 0
        self.delay_s = 0.0
        self.hold = threading.Event()
        self.hold.set()
        self.hold_from: int | None = None
        self.holding = threading.Event()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.arrived.set()
                limit = receiver.hold_from
                if limit is None or len(receiver.received) >= limit:
                    if not receiver.hold.is_set():
                        receiver.holding.set()
                    receiver.hold.wait(60)
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                with receiver._lock:
                    failing = receiver.fail_next > 0
                    receiver.fail_next -= failing
                    if not failing:
                        receiver.received.append(receiver._record(self.headers, raw))
                self.send_response(500 if failing else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _record(self, headers: Any, raw: bytes) -> Received:
        expected = "sha256=" + hmac.new(self.secret.encode(), raw, hashlib.sha256).hexdigest()
        signature = headers.get("X-Graphlake-Signature", "")
        return Received(
            headers.get("X-Graphlake-Event", ""),
            headers.get("X-Graphlake-Delivery", ""),
            signature,
            hmac.compare_digest(expected, signature),
            json.loads(raw),
        )

    def close(self) -> None:
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()

    def commits(self, branch: str | None = None) -> list[str]:
        with self._lock:
            return [
                r.body["commit"]
                for r in self.received
                if r.event in ("commit", "merge") and (branch is None or r.body["branch"] == branch)
            ]

    def wait_for(self, done: Callable[[], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; received {self.received}")
            time.sleep(0.05)
