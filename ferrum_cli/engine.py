"""The engine service as the sub-commands open it: settings from their arguments, models loaded
through the service's one loader (optionally without transformers' own progress bars)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def service_settings(args, **changes):
    """``ServiceSettings`` from the common arguments (``--device``, ``--threads``) plus ``changes``
    (a None value keeps the default)."""
    from executors.service import ServiceSettings

    given = {"device": getattr(args, "device", None) or "auto", "threads": threads_of(args), **changes}
    return ServiceSettings(**{k: v for k, v in given.items() if v is not None})


def threads_of(args) -> int | None:
    """``--threads``, checked (None: one per core)."""
    from executors.core.errors import InvalidParameterError

    threads = getattr(args, "threads", None)
    if threads is not None and threads < 1:
        raise InvalidParameterError("--threads must be at least 1", "leave it out to use one thread per core")
    return threads


@contextlib.contextmanager
def open_engine(args, **changes) -> Iterator:
    """An ``EngineService`` for one command; queued work (e.g. index updates) finishes before it closes."""
    from executors.service import EngineService

    engine = EngineService(service_settings(args, **changes))
    try:
        yield engine
    finally:
        engine.close(finish_queued=True)


def load(engine, kind: str, quiet: bool = False):
    """Load the ``kind`` model now (errors surface here, before any work); ``quiet`` hides the
    "Loading weights" bar transformers draws for the embedding model (Whisper loads without
    transformers, whose import alone takes about a second)."""
    from executors.service.settings import WHISPER

    if not quiet or kind == WHISPER:
        return engine.models.load(kind).result()
    from transformers.utils import logging as hf_logging

    bars_on = hf_logging.is_progress_bar_enabled()
    if bars_on:
        hf_logging.disable_progress_bar()
    try:
        return engine.models.load(kind).result()
    finally:
        if bars_on:
            hf_logging.enable_progress_bar()


def wait_for(job):
    """A job's result; Ctrl+C cancels it and waits for it to stop (its history record says so)."""
    try:
        return job.result()
    except KeyboardInterrupt:
        job.cancel()
        with contextlib.suppress(Exception):
            job.result(timeout=60)
        raise
