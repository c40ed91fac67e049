"""The HTTP server (`graphlake serve`): a FastAPI app over one graph. Needs the `server` extra.

Importing this package without it raises `MissingExtraError` naming the `pip install` to
run (checked before any of its modules loads FastAPI).
"""

import importlib.util

from graphlake.errors import MissingExtraError

_EXTRA = ("fastapi", "uvicorn", "jinja2", "httpx")  # pyproject.toml's `server` extra
_missing = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
if _missing:
    raise MissingExtraError(
        f"the HTTP server needs {', '.join(_missing)}: pip install 'graphlake[server]'"
    )

# after the extra check above: a missing extra is its typed error, not a bare ImportError
from graphlake.server.app import create_app, serve  # noqa: E402
from graphlake.server.config import ConfigError, Limits, Scope, ServerConfig, load_config  # noqa: E402

__all__ = ["ConfigError", "Limits", "Scope", "ServerConfig", "create_app", "load_config", "serve"]
