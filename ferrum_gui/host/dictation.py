"""Live dictation methods of ``ExecutorHost``: sessions run on the engine service (one thread each,
passes take the model before waiting file work), their events come to the GUI thread."""

from __future__ import annotations

from executors.core.errors import FerrumError
from executors.service.settings import WHISPER
from executors.service.workers import IO


class HostDictation:
    """Mixed into ``ExecutorHost``; uses its service, workers and failure path."""

    _dictation_run = None

    async def input_devices(self) -> list:
        """``executors.dictation.InputDevice`` for every audio input (raises DeviceError/NotFoundError)."""
        return await self._run(IO, _list_input_devices)  # PortAudio's query can block: off the GUI thread

    async def dictate(self, source, options, on_event):
        """Dictate from ``source`` (an ``executors.dictation`` source) until it ends or
        ``stop_dictation()``; ``on_event`` gets every event on the GUI thread. Returns the
        ``DictationSession`` (its ``summary``, text and recording), kept unsaved until
        ``save_dictation`` or ``discard_dictation``. Latency and lag go to the monitor as ``sample``."""
        await self.ready(WHISPER)
        run = self._dictation_run = self.service.dictation.start(source, options, self._threadsafe(on_event))
        try:
            return await self._await(run.future, "dictating")
        except FerrumError as exc:
            exc.session = run.session  # what it heard before the failure can still be saved
            raise
        finally:
            self._dictation_run = None

    def stop_dictation(self, wait: bool = False) -> None:
        self.service.dictation.stop(wait=wait)

    async def save_dictation(self, session_ids: list[int] | None = None) -> list[int]:
        """Store ended, unsaved dictation sessions (default: all) in the history, one record each with
        its own recording; returns the record ids."""
        return await self._io(self.service.dictation.save, session_ids, doing="saving the dictation")

    def correct_dictation(self, session_id: int, utterances: list[tuple[float, float, str]]) -> None:
        """The user's corrected text of an ended session (Save stores it, again if saved before)."""
        self.service.dictation.correct(session_id, utterances)

    async def discard_dictation(self, session_ids: list[int] | None = None) -> int:
        """Forget unsaved sessions (default: all) and delete their recordings."""
        return await self._io(self.service.dictation.discard, session_ids, doing="discarding the dictation")

    async def restore_dictation(self) -> list:
        """Unsaved sessions a previous run left when it ended without saving or discarding them (a
        crash), now ended, unsaved sessions of this one (each is restored once)."""
        return await self._io(self.service.dictation.restore, doing="restoring unsaved dictation")


def _list_input_devices() -> list:
    from executors.audio.capture import list_input_devices  # not executors.dictation: that imports torch

    return list_input_devices()
