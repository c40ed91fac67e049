"""`IngestError`, and carrying a worker's typed error back to the orchestrator.

A worker returns its failure as data (`ErrorInfo`) instead of raising it: exceptions with
their own `__init__` (like `LoadFormatError(message, path, line)`) do not survive pickling
through a process pool or Ray intact, and Ray would wrap them in its own class. `rebuild`
gives the caller back an exception of the original class, message and attributes.
"""

from __future__ import annotations

import importlib
import traceback
from dataclasses import dataclass, field
from typing import Any

from graphlake.errors import GraphLakeError

__all__ = ["ErrorInfo", "IngestError"]

# Attributes of graphlake's errors worth carrying across (plain JSON-able values only).
_CARRIED_ATTRS = ("path", "line", "column")


class IngestError(GraphLakeError):
    """A sharded ingest cannot run or did not finish (engine, run id, plan, worker crash)."""


@dataclass(frozen=True)
class ErrorInfo:
    """A worker's exception as plain data: class, message, simple attributes, traceback."""

    module: str
    qualname: str
    message: str
    attrs: dict[str, Any] = field(default_factory=dict)
    traceback: str = ""

    @classmethod
    def of(cls, exc: BaseException) -> ErrorInfo:
        attrs = {
            a: getattr(exc, a)
            for a in _CARRIED_ATTRS
            if isinstance(getattr(exc, a, None), str | int)
        }
        return cls(
            type(exc).__module__,
            type(exc).__qualname__,
            str(exc),
            attrs,
            "".join(traceback.format_exception(exc)),
        )

    def rebuild(self) -> GraphLakeError:
        """An exception of the original class when it is a `GraphLakeError`, else an
        `IngestError` naming the original type."""
        try:
            cls = getattr(importlib.import_module(self.module), self.qualname)
        except (ImportError, AttributeError):
            cls = None
        if isinstance(cls, type) and issubclass(cls, GraphLakeError):
            exc = cls.__new__(cls)
            Exception.__init__(exc, self.message)
            for name, value in self.attrs.items():
                setattr(exc, name, value)
            return exc
        return IngestError(f"{self.qualname}: {self.message}")
