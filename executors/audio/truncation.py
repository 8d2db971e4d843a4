"""Audio that ends early: a file whose decoding breaks off part-way (an interrupted copy, download or
recording) keeps the audio before the break, and whoever is watching hears that it was cut short.

The decoder reports each ``Truncation`` here; ``watch_truncations()`` collects those seen by the code
it wraps on this thread (a job's worker: decoding happens on the thread that iterates the audio).
Unwatched, a truncation is still logged.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_HINT = ("The rest of the file is damaged or missing (an interrupted copy, download or recording?); "
         "the transcript covers the audio before the break. Copy the file again if you have the whole of it.")


@dataclass(frozen=True)
class Truncation:
    name: str                        # the file (or "<N bytes of audio>") as messages name it
    decoded_seconds: float           # audio decoded before the break
    expected_seconds: float | None   # what the file's header promised, when it says

    @property
    def message(self) -> str:
        total = f" of {self.expected_seconds:.1f} s" if self.expected_seconds else ""
        return (f"{Path(self.name).name} is cut short: only its first {self.decoded_seconds:.1f} s{total} "
                f"could be decoded")

    @property
    def hint(self) -> str:
        return _HINT


_watchers: ContextVar[tuple[list[Truncation], ...]] = ContextVar("truncation_watchers", default=())


@contextlib.contextmanager
def watch_truncations() -> Iterator[list[Truncation]]:
    """The list of truncations (one per file) that decoding inside the block reports on this thread."""
    found: list[Truncation] = []
    token = _watchers.set((*_watchers.get(), found))
    try:
        yield found
    finally:
        _watchers.reset(token)


def report_truncation(truncation: Truncation) -> None:
    log.warning("%s (%s)", truncation.message, truncation.name)
    for found in _watchers.get():
        # the same file decoded twice in one job (VAD, speakers) is one truncation
        if all(seen.name != truncation.name for seen in found):
            found.append(truncation)
