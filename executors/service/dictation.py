"""``DictationService``: live dictation sessions, each on its own thread, each with its own audio.

A session records its audio into the service's scratch folder. Saving a session moves its recording
next to the history and stores the session's own text against it; a session discarded, or still
unsaved when the service closes, takes its recording with it. Until then its text is kept on disk beside
the recording (``dictation_store``): a process that dies first leaves it to the next one's ``restore()``.
"""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.errors import IOError_, wrap_unexpected
from . import dictation_store as store
from .events import EventHub, Failure, Sample
from .history import HistoryService
from .models import ModelSlots
from .scratch import ScratchFolder
from .settings import WHISPER

_session_ids = itertools.count(1)


@dataclass
class DictationSession:
    id: int
    source: str                       # the input's name
    audio_path: Path | None           # its recording, if any
    owns_audio: bool                  # the service made the recording (may move or delete it)
    started: float = field(default_factory=time.time)
    model_id: str = ""
    language: str = "en"               # the one given, else the one most utterances were heard in
    utterances: list[tuple[float, float, str]] = field(default_factory=list)  # (start, end, text)
    summary: object | None = None     # DictationSummary once it ended
    record_id: int | None = None      # once saved to the history
    corrected: bool = False           # the user changed the text since it was saved

    @property
    def ended(self) -> bool:
        return self.summary is not None

    @property
    def text(self) -> str:
        return " ".join(text for _, _, text in self.utterances)

    def transcript(self):
        from ..dictation import session_transcript

        duration = getattr(self.summary, "audio_seconds", 0.0) or (self.utterances[-1][1] if self.utterances else 0.0)
        return session_transcript(self.utterances, duration, self.language, self.model_id)


class DictationRun:
    """A running session: ``stop()`` finishes it (the open utterance gets its final pass);
    ``future`` settles with the ``DictationSession`` (or the error that ended it)."""

    def __init__(self, session: DictationSession):
        self.session = session
        self.future: Future = Future()
        self._stop = threading.Event()
        self._engine = None
        self.thread: threading.Thread | None = None

    def stop(self) -> None:
        self._stop.set()
        if self._engine is not None:
            self._engine.stop()

    def result(self, timeout: float | None = None) -> DictationSession:
        return self.future.result(timeout)


class DictationService:
    def __init__(self, models: ModelSlots, history: HistoryService, events: EventHub, scratch: ScratchFolder,
                 keep_folder: Callable[[], Path]):
        self._models = models
        self._history = history
        self._events = events
        self._scratch = scratch
        self._keep_folder = keep_folder   # where saved recordings go
        self._sessions: dict[int, DictationSession] = {}
        self._runs: list[DictationRun] = []
        self._lock = threading.Lock()

    def start(self, source, options=None, on_event: Callable | None = None, *, record: bool = True) -> DictationRun:
        """Dictate from ``source`` (an ``executors.dictation`` source) on a new thread until it ends or
        ``stop()``; ``on_event`` gets every event on that thread. The session is recorded unless
        ``record`` is False or ``options.record_path`` names a file of the caller's."""
        from ..dictation import DictationOptions

        options = options or DictationOptions()
        session_id = next(_session_ids)
        owns = record and options.record_path is None
        if owns:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            options = replace(options, record_path=self._scratch.path / f"dictation-{stamp}-{session_id}.flac")
        session = DictationSession(session_id, getattr(source, "name", str(source)),
                                   Path(options.record_path) if options.record_path else None, owns)
        run = DictationRun(session)
        with self._lock:
            self._sessions[session.id] = session
            self._runs.append(run)
        run.thread = threading.Thread(target=self._work, args=(run, source, options, on_event),
                                      name="ferrum-dictation", daemon=True)
        run.thread.start()
        return run

    def _work(self, run: DictationRun, source, options, on_event) -> None:
        from ..dictation import Committed, DictationEngine, UtteranceEnd

        def relay(event) -> None:
            if on_event is not None:
                on_event(event)
            if isinstance(event, UtteranceEnd):
                self._events.emit(Sample("dictation_latency_s", float(event.latency)))
                run.session.utterances = list(engine.utterances)
                self._keep_on_disk(run.session)
            elif isinstance(event, Committed):
                self._events.emit(Sample("dictation_lag_s", float(event.lag)))

        session, engine = run.session, None
        try:
            executor = self._models.load(WHISPER).result().executor
            engine = run._engine = DictationEngine(executor, options, on_event=relay)
            session.model_id = getattr(executor, "model_id", "")
            if run._stop.is_set():
                engine.stop()
            engine.run(source)
        except BaseException as exc:  # noqa: BLE001 - delivered through the run's future
            self._ended(run, engine)
            run.future.set_exception(wrap_unexpected(exc, "dictating") if isinstance(exc, Exception) else exc)
            return
        self._ended(run, engine)
        run.future.set_result(session)

    def _ended(self, run: DictationRun, engine) -> None:
        if engine is not None:
            run.session.utterances = list(engine.utterances)
            run.session.language = engine.language
            run.session.summary = engine.summary
            self._keep_on_disk(run.session)
        with self._lock:
            if run in self._runs:
                self._runs.remove(run)

    def stop(self, wait: bool = False) -> None:
        """Stop every running session (and wait for them to finish with ``wait``)."""
        with self._lock:
            runs = list(self._runs)
        for run in runs:
            run.stop()
        if wait:
            for run in runs:
                if run.thread is not None:
                    run.thread.join(timeout=30)

    def sessions(self, unsaved: bool = False) -> list[DictationSession]:
        with self._lock:
            return [s for s in self._sessions.values()
                    if not (unsaved and s.record_id is not None and not s.corrected)]

    def correct(self, session_id: int, utterances: list[tuple[float, float, str]]) -> None:
        """The user's corrected text of an ended session (saved with it; a saved session is saved again)."""
        for session in self._pick([session_id]):
            if session.ended and utterances != session.utterances:
                session.utterances = list(utterances)
                session.corrected = session.record_id is not None
                self._keep_on_disk(session)

    def save(self, session_ids: list[int] | None = None) -> list[int]:
        """Store ended, unsaved sessions (default: all of them) in the history, one record each, with
        its own recording; returns the record ids. A saved session corrected since replaces its entry.
        Sessions that heard nothing are discarded."""
        saved = []
        for session in self._pick(session_ids):
            if not session.ended or (session.record_id is not None and not session.corrected):
                continue
            if not session.utterances:
                self.discard([session.id])
                continue
            in_scratch = session.audio_path if session.owns_audio else None
            audio = session.audio_path if session.audio_path is not None and session.audio_path.is_file() else None
            if audio is not None and session.owns_audio:
                folder = self._keep_folder()
                folder.mkdir(parents=True, exist_ok=True)
                audio = Path(shutil.move(str(audio), str(folder / audio.name)))
                session.audio_path, session.owns_audio = audio, False
            session.record_id = self._history.add_dictation(audio, session.transcript(), session.model_id,
                                                            session.record_id)
            if in_scratch is not None:
                store.remove(in_scratch)  # its crash copy: the history has it now
            session.corrected = False
            saved.append(session.record_id)
        return saved

    def discard(self, session_ids: list[int] | None = None) -> int:
        """Forget ended, unsaved sessions (default: all), deleting the recordings the service made."""
        gone = 0
        for session in self._pick(session_ids):
            if not session.ended or session.record_id is not None:
                continue
            if session.owns_audio and session.audio_path is not None:
                store.remove(session.audio_path)
                session.audio_path.unlink(missing_ok=True)
            with self._lock:
                self._sessions.pop(session.id, None)
            gone += 1
        return gone

    def restore(self) -> list[DictationSession]:
        """The unsaved sessions of processes that ended without saving or discarding them (a crash), as
        ended, unsaved sessions of this service (each taken over once)."""
        restored = []
        for marker in self._scratch.adopt():
            stored = store.read(marker)
            if stored is not None:
                session = _restored_session(stored)
                with self._lock:
                    self._sessions[session.id] = session
                restored.append(session)
        return restored

    def _keep_on_disk(self, session: DictationSession) -> None:
        """Write an unsaved session's text beside its recording (only the service's own recordings)."""
        if not (session.owns_audio and session.audio_path is not None and session.utterances):
            return
        audio_seconds = getattr(session.summary, "audio_seconds", 0.0) or session.utterances[-1][1]
        try:
            store.write(store.StoredSession(session.source, session.audio_path, session.started,
                                            session.model_id, session.language, session.utterances,
                                            audio_seconds))
        except OSError as exc:  # the session itself goes on; only its crash copy is missing
            self._events.emit(Failure(IOError_(
                f"Cannot keep a copy of the dictation in {session.audio_path.parent}: {exc.strerror or exc}",
                "free some disk space, and save the dictation to the history")))

    def _pick(self, session_ids: list[int] | None) -> list[DictationSession]:
        with self._lock:
            if session_ids is None:
                return list(self._sessions.values())
            return [self._sessions[i] for i in session_ids if i in self._sessions]

    def close(self) -> None:
        """Stop running sessions and delete the recordings nobody saved."""
        self.stop(wait=True)
        self.discard()


def _restored_session(stored: store.StoredSession) -> DictationSession:
    from ..dictation import DictationSummary

    summary = DictationSummary(text=" ".join(text for _, _, text in stored.utterances),
                               utterances=len(stored.utterances), audio_seconds=stored.audio_seconds,
                               record_path=stored.audio_path)
    return DictationSession(next(_session_ids), stored.source, stored.audio_path, owns_audio=True, started=stored.started,
                            model_id=stored.model_id, language=stored.language, utterances=stored.utterances,
                            summary=summary)
