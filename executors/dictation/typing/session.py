"""``TypingSession``: types a dictation session's committed phrases, in order, on its own thread.

Only ``Committed`` events are typed (tentative text may still change).  Typing never blocks the
engine or the GUI: phrases queue up and one worker thread types them.  The first failure stops
typing for the session; what was not typed stays in ``untyped`` and the error goes to ``on_error``
once, so the caller can say what happened while the text itself lives on in its own view.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from ...core.errors import FerrumError, wrap_unexpected
from .base import Typist
from .joiner import PhraseJoiner

_CLOSE = object()


class TypingSession:
    def __init__(self, typist: Typist, joiner: PhraseJoiner | None = None,
                 on_error: Callable[[FerrumError], None] | None = None,
                 on_typed: Callable[[str], None] | None = None):
        self.typist = typist
        self.joiner = joiner or PhraseJoiner()
        self.on_error = on_error
        self.on_typed = on_typed
        self.error: FerrumError | None = None
        self.untyped: list[str] = []      # committed phrases not typed because typing failed
        self._queue: queue.Queue = queue.Queue()
        self._pending = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="ferrum-typing", daemon=True)
        self._thread.start()

    @property
    def typed(self) -> str:
        return self.joiner.typed

    def feed(self, event) -> None:
        """Any dictation event; only committed text is typed."""
        from ..events import Committed

        if isinstance(event, Committed):
            self.phrase(event.text)

    def phrase(self, text: str) -> None:
        with self._lock:
            self._pending += 1
        self._queue.put(text)

    def close(self, wait: bool = True, timeout: float = 30.0) -> None:
        """Stop after the phrases already queued are typed (or given up)."""
        self._queue.put(_CLOSE)
        if wait:
            self._thread.join(timeout)

    @property
    def pending(self) -> int:
        """Phrases waiting to be typed (0 once everything fed so far is typed or given up)."""
        return self._pending

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _work(self) -> None:
        try:
            while (text := self._queue.get()) is not _CLOSE:
                try:
                    self._handle(text)
                finally:
                    with self._lock:
                        self._pending -= 1
        finally:
            self.typist.close()

    def _handle(self, text: str) -> None:
        if self.error is not None:
            self.untyped.append(text)
            return
        try:
            self._type(text)
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none kills the thread
            self.error = wrap_unexpected(exc, "typing dictated text")
            self.untyped.append(text)
            if self.on_error is not None:
                self.on_error(self.error)

    def _type(self, text: str) -> None:
        before = self.joiner.typed
        piece = self.joiner.join(text)
        if not piece:
            return
        try:
            self.typist.type_text(piece)
        except BaseException:
            self.joiner.typed = before  # not typed: the next phrase must not assume it was
            raise
        if self.on_typed is not None:
            self.on_typed(piece)
