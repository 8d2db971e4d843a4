"""The rotating log file every front-end writes: ``log_dir()/ferrum.log`` (1 MiB, five old files kept).

Errors shown to the user say what happened; the log keeps the details a bug report needs (the
traceback, the versions), without ever growing past a few megabytes.
"""

from __future__ import annotations

import logging
import logging.handlers
import platform
import sys
from pathlib import Path

from .paths import log_dir

LOG_NAME = "ferrum.log"
MAX_BYTES = 1 << 20
BACKUPS = 5
_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"


def log_file() -> Path:
    return log_dir() / LOG_NAME


def setup_file_logging(app: str, version: str = "", level: int = logging.INFO) -> Path:
    """Send the root logger to the rotating log file (once per process); returns the file's path.

    Uncaught exceptions of the main thread and of worker threads are logged with their traceback."""
    path = log_file()
    root = logging.getLogger()
    if not any(getattr(h, "_ferrum_log", False) for h in root.handlers):
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                       encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._ferrum_log = True
        root.addHandler(handler)
        root.setLevel(min(root.level or level, level))
        _log_uncaught()
    logging.getLogger("ferrum").info("%s %s started (Python %s, %s)", app, version, platform.python_version(),
                                     platform.platform())
    return path


def _log_uncaught() -> None:
    previous_hook = sys.excepthook

    def hook(exc_type, exc, tb):
        logging.getLogger("ferrum").critical("uncaught exception", exc_info=(exc_type, exc, tb))
        previous_hook(exc_type, exc, tb)

    sys.excepthook = hook
    import threading

    previous_thread_hook = threading.excepthook

    def thread_hook(args):
        logging.getLogger("ferrum").error("uncaught exception in thread %s", getattr(args.thread, "name", "?"),
                                          exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
        previous_thread_hook(args)

    threading.excepthook = thread_hook


def log_error(error: BaseException, where: str = "ferrum") -> None:
    """Log an error the user was shown, with the traceback of what caused it when there is one."""
    cause = error.__cause__ or error.__context__
    exc_info = (type(cause), cause, cause.__traceback__) if cause is not None else None
    if exc_info is None and error.__traceback__ is not None:
        exc_info = (type(error), error, error.__traceback__)
    logging.getLogger(where).error("%s", error, exc_info=exc_info)
