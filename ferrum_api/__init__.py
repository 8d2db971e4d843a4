"""OpenAI-compatible HTTP API over Ferrum's executors (aiohttp; runs on the caller's event loop)."""

from .server import ApiConfig, ApiServer, create_app

__all__ = ["ApiConfig", "ApiServer", "create_app"]
