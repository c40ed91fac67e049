"""Optional integrations: import one only when it is used, or say which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from graphlake.errors import MissingExtraError

__all__ = ["EXTRAS", "require"]

# module -> (what it is for, the extra that installs it)
EXTRAS = {
    "torch": ("to_torch", "torch"),
    "ray": ("to_ray", "ray"),
    "datasets": ("to_hf", "hf"),
    "polars": ("to_polars", "polars"),
}


def require(module: str) -> ModuleType:
    """Import `module` (one of `EXTRAS`), or raise a one-line `MissingExtraError`."""
    what, extra = EXTRAS[module]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{what} needs {module}: pip install 'graphlake[{extra}]'"
        ) from None
