"""moto's S3 server with atomic conditional writes, for the test session's S3 half.

Real S3 decides `If-None-Match: *` (and `If-Match`) atomically: of N concurrent
conditional creates of one key, exactly one succeeds. moto 5.2 checks the condition and
then stores the object as two steps on its threaded server, so under load two creates
both passed the check and both "won" (the catalog's conditional create, refs' CAS and
every claim built on them rely on exactly one winner). This wrapper serialises moto's
object PUTs behind one lock, which makes check-and-store one step, as S3 promises, and
then runs moto's own server entry point.

Run as a script: `python tests/moto_server.py -H 127.0.0.1 -p PORT` (see s3server.py).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from moto import server
from moto.s3.responses import S3Response

_PUT_LOCK = threading.Lock()


def _atomic(method: Any) -> Any:
    @functools.wraps(method)
    def locked(self: S3Response, *args: Any, **kwargs: Any) -> Any:
        with _PUT_LOCK:
            return method(self, *args, **kwargs)

    return locked


def patch() -> None:
    """Make moto's PutObject (condition check + store) one atomic step."""
    S3Response.put_object = _atomic(S3Response.put_object)  # type: ignore[method-assign]


if __name__ == "__main__":
    patch()
    server.main()
