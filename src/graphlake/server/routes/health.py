"""`GET /health`: liveness, without authentication."""

from __future__ import annotations

from fastapi import APIRouter

from graphlake import __version__
from graphlake.server.models import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health, summary="Liveness check (no token needed)")
def health() -> Health:
    return Health(version=__version__)
