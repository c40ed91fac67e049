"""POSTing one event to one receiver, with bounded attempts and exponential backoff.

An attempt succeeds on a 2xx answer; anything else (another status, a refused
connection, a timeout of `timeout_s`) is an error recorded in the delivery log. Between
attempts the sender waits `backoff_s`, doubling each time (at most `MAX_BACKOFF_S`);
after `max_attempts` the delivery is marked `failed`, and the next round starts after
`retry_pause_s`: a delivery is never skipped, so the webhook holds its position (and its
order) until the receiver takes it. Redirects are not followed.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime

import httpx

from graphlake import __version__
from graphlake.catalog.commits import format_time
from graphlake.server.config import Webhook
from graphlake.server.webhooks.events import Event
from graphlake.server.webhooks.log import Delivery, DeliveryLog
from graphlake.server.webhooks.signing import sign

__all__ = ["MAX_BACKOFF_S", "Sender"]

_log = logging.getLogger(__name__)

MAX_BACKOFF_S = 30.0
_ERROR_CHARS = 300


class Sender:
    def __init__(self, hook: Webhook, log: DeliveryLog, stop: threading.Event) -> None:
        self.hook = hook
        self._log = log
        self._stop = stop
        self._client = httpx.Client(timeout=hook.timeout_s, follow_redirects=False, trust_env=False)

    def close(self) -> None:
        self._client.close()

    def deliver(self, event: Event) -> bool:
        """POST `event` until the receiver takes it (True) or the server stops (False)."""
        body = event.body()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"graphlake-webhooks/{__version__}",
            "X-Graphlake-Event": event.name,
            "X-Graphlake-Delivery": event.delivery,
            "X-Graphlake-Signature": sign(body, self.hook.secret),
        }
        key, record = self._record(event)
        in_round = 0
        while not self._stop.is_set():
            record.attempts += 1
            in_round += 1
            error, code = self._post(body, headers)
            record.updated = _now()
            record.last_status_code = code
            if error is None:
                record.status, record.last_error = "delivered", None
                self._log.write(key, record)
                return True
            record.last_error = error
            if in_round >= self.hook.max_attempts:
                record.status = "failed"
                self._log.write(key, record)
                _log.warning(
                    "webhook %s: delivery %s (%s) failed %d times (%s); trying again in %.0f s",
                    self.hook.name,
                    event.delivery,
                    event.name,
                    in_round,
                    error,
                    self.hook.retry_pause_s,
                )
                in_round = 0
                self._stop.wait(self.hook.retry_pause_s)
            else:
                record.status = "pending"
                self._log.write(key, record)
                self._stop.wait(min(MAX_BACKOFF_S, self.hook.backoff_s * 2 ** (in_round - 1)))
        return False

    def _post(self, body: bytes, headers: dict[str, str]) -> tuple[str | None, int | None]:
        try:
            response = self._client.post(self.hook.url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS], None
        if 200 <= response.status_code < 300:
            return None, response.status_code
        return f"HTTP {response.status_code}", response.status_code

    def _record(self, event: Event) -> tuple[str, Delivery]:
        """The log record of `event`: the existing one (a delivery resumed after a
        restart keeps counting its attempts), else a new one."""
        found = self._log.find(event.delivery)
        if found is not None:
            return found
        now_ms = int(time.time() * 1000)
        payload = event.payload
        record = Delivery(
            id=event.delivery,
            webhook=self.hook.name,
            event=event.name,
            status="pending",
            attempts=0,
            created=_now(),
            updated=_now(),
            branch=payload.get("branch"),
            commit=payload.get("commit"),
            tag=payload.get("tag"),
        )
        return self._log.key_for(now_ms, event.delivery), record


def _now() -> str:
    return format_time(datetime.now(UTC))
