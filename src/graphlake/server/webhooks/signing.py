"""Webhook signatures: HMAC-SHA256 of the exact body bytes, as `sha256=<hex>`.

A receiver recomputes the HMAC of the raw body it received (before any JSON parsing) with
the shared secret and compares in constant time (`verify`).
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["PREFIX", "sign", "verify"]

PREFIX = "sha256="


def sign(body: bytes, secret: str) -> str:
    """The `X-Graphlake-Signature` value of `body`."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return PREFIX + digest


def verify(body: bytes, secret: str, header: str | None) -> bool:
    """True if `header` is the signature of `body` under `secret` (constant time)."""
    if not isinstance(header, str):
        return False
    return hmac.compare_digest(sign(body, secret).encode(), header.strip().encode())
