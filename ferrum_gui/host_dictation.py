"""Live dictation methods of ``ExecutorHost``: one thread per session (it runs for minutes,
so file jobs on the Whisper worker interleave with it)."""

from __future__ import annotations

import asyncio
import threading

from . import host_jobs as jobs
from .host_io import IO
from .host_jobs import WHISPER


class HostDictation:
    """Mixed into ``ExecutorHost``; uses its workers, signals and failure path."""

    _dictation = None
    _dictation_thread: threading.Thread | None = None

    async def input_devices(self) -> list:
        """``executors.dictation.InputDevice`` for every audio input (raises DeviceError/NotFoundError)."""
        return await self._run(IO, jobs.list_input_devices)  # imports torch: never on the GUI thread

    async def dictate(self, source, options, on_event):
        """Dictate from ``source`` (an ``executors.dictation`` source) until it ends or
        ``stop_dictation()``; ``on_event`` gets every event on the GUI thread; returns the
        ``DictationSummary``.  Latency and lag go to the monitor as ``sample`` series."""
        ex = await self.ready(WHISPER)
        # after the load: executors.dictation imports torch, which the loader has imported by now
        from executors.dictation import Committed, DictationEngine, UtteranceEnd

        forward = self._threadsafe(on_event)
        sample = self._threadsafe(self.sample.emit)

        def relay(event):
            forward(event)
            if isinstance(event, UtteranceEnd):
                sample("dictation_latency_s", float(event.latency))
            elif isinstance(event, Committed):
                sample("dictation_lag_s", float(event.lag))

        engine = self._dictation = DictationEngine(ex, options, on_event=relay)
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def settle(result, error):
            if not done.done():
                done.set_exception(error) if error is not None else done.set_result(result)

        def work():
            try:
                result, error = engine.run(source), None
            except BaseException as exc:  # noqa: BLE001 - delivered to the awaiting panel
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:  # the loop closed while the app quits
                pass

        self._dictation_thread = threading.Thread(target=work, name="ferrum-dictation", daemon=True)
        self._dictation_thread.start()
        try:
            return await done
        except Exception as exc:
            raise self._report(exc, "dictating") from exc
        finally:
            self._dictation = None

    def stop_dictation(self, wait: bool = False) -> None:
        engine = getattr(self, "_dictation", None)
        if engine is not None:
            engine.stop()
        thread = getattr(self, "_dictation_thread", None)
        if wait and thread is not None:
            thread.join(timeout=30)

    async def save_dictation(self, audio_path, transcript) -> int:
        """Store a dictation session (audio file + transcript) in the transcript history."""
        record_id = await self._io(lambda h: h.add_dictation(audio_path, transcript))
        self.historyChanged.emit()
        return record_id
