"""The HTTP server (`graphlake serve`): a FastAPI app over one graph. Needs the `server` extra."""

from graphlake.server.app import create_app, serve
from graphlake.server.config import ConfigError, Limits, Scope, ServerConfig, load_config

__all__ = ["ConfigError", "Limits", "Scope", "ServerConfig", "create_app", "load_config", "serve"]
