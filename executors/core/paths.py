"""Where the app keeps its data and caches (overridable for tests and portable installs)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "ferrum-desktop"


def _dir(env: str, default: str) -> Path:
    path = Path(os.environ.get(env) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """Databases: transcript history, search index, API token."""
    return _dir("FERRUM_DATA_DIR", platformdirs.user_data_dir(APP_NAME))


def cache_dir() -> Path:
    """Derived files that can be rebuilt: converted models."""
    return _dir("FERRUM_CACHE_DIR", platformdirs.user_cache_dir(APP_NAME))


def log_dir() -> Path:
    """The app's rotating log files (``ferrum.log``, ``ferrum.log.1`` …), under the data folder."""
    path = data_dir() / "logs"
    path.mkdir(parents=True, exist_ok=True)
    return path
