"""Failed authentications are answered late: a growing delay per client address.

An unknown token (API 401, UI login) from an address is answered after
`BASE_DELAY_S * 2**(n-1)` seconds for its n-th failure in a row, at most `MAX_DELAY_S`;
an address's failures are answered one after another (each waits for the previous one's
answer time), so parallel guesses from one address gain nothing until they pile up
past `MAX_HOLD_S`, the longest any answer is held. An address with no failure for
`FORGET_S` starts again at the base delay. At most `MAX_ADDRESSES` are tracked (the
least recently failing are forgotten first), so the table's memory is bounded.

The wait is an `asyncio.sleep` on the event loop: it holds no worker thread and no other
request waits for it. Only failures wait; a valid token is never delayed, also when it
comes from an address others fail from (on loopback every client has the same address).
A missing token is no guess and is answered at once.

The address is the one uvicorn reports: behind a proxy on 127.0.0.1, the one in its
`X-Forwarded-For`.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass

from starlette.types import Scope

BASE_DELAY_S = 0.1
MAX_DELAY_S = 3.0
MAX_HOLD_S = 30.0
FORGET_S = 60.0
MAX_ADDRESSES = 10_000


@dataclass
class _Failures:
    count: int
    last: float  # when the latest failure arrived
    free_at: float  # when the latest failure is answered


class FailureThrottle:
    def __init__(
        self,
        base_s: float = BASE_DELAY_S,
        max_s: float = MAX_DELAY_S,
        max_hold_s: float = MAX_HOLD_S,
        forget_s: float = FORGET_S,
        max_addresses: int = MAX_ADDRESSES,
    ):
        self._base, self._max, self._hold = base_s, max_s, max_hold_s
        self._forget, self._cap = forget_s, max_addresses
        self._seen: OrderedDict[str, _Failures] = OrderedDict()

    def delay_for(self, address: str) -> float:
        """Record a failure from `address`: the seconds until it may be answered."""
        now = time.monotonic()
        entry = self._seen.pop(address, None)
        if entry is None or now - entry.last > self._forget:
            entry = _Failures(0, now, now)
        entry.count += 1
        step = min(self._base * 2 ** min(entry.count - 1, 30), self._max)
        entry.last = now
        entry.free_at = min(max(entry.free_at, now) + step, now + self._hold)
        self._seen[address] = entry
        while len(self._seen) > self._cap:
            self._seen.popitem(last=False)
        return entry.free_at - now

    async def failed(self, address: str) -> None:
        """Wait (without blocking the event loop) before answering a failed login."""
        await asyncio.sleep(self.delay_for(address))


def client_address(scope: Scope) -> str:
    """The client's address of an ASGI scope ("" when unknown)."""
    client = scope.get("client")
    return str(client[0]) if client else ""
