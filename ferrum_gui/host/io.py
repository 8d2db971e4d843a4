"""The host's history, export, embedding, indexing, search and playback methods.

Mixed into ``ExecutorHost``; each one awaits the engine service (``self.service``) through the host's
``_await``/``_run``, so its failures reach ``failure`` once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from executors.service import FILES
from executors.service.workers import IO

__all__ = ["IO", "HostServices", "cache_hit_rate"]


class HostServices:
    """History, export, embeddings, search and playback methods of ``ExecutorHost``."""

    # ---- history (I/O worker) ------------------------------------------------------------
    async def _io(self, fn, *args, doing: str = "reading or writing the transcript history"):
        try:
            return await self._run(IO, fn, *args)
        except Exception as exc:  # noqa: BLE001
            raise self._report(exc, doing) from exc

    async def list_history(self):
        return await self._io(self.service.history.list)

    async def load_history(self, record_id):
        return await self._io(self.service.history.load, record_id)

    async def update_segment_text(self, record_id, segment_id: int, text: str) -> None:
        """Save an edited segment; the transcript's search entry is rebuilt in the background."""
        await self._io(self.service.history.update_segment_text, record_id, segment_id, text)

    async def rename_speaker(self, record_id, label: str, name: str) -> None:
        """Show speaker ``label`` of a record as ``name`` in the view and every export."""
        await self._io(self.service.history.rename_speaker, record_id, label, name)

    async def delete_history(self, record_id) -> None:
        """Delete a record (its search entry goes with it)."""
        await self._io(self.service.history.delete, record_id)

    async def export(self, transcript, path, fmt: str | None = None) -> Path:
        """Write ``transcript`` (or a record, by id) as ``fmt`` (default: from the extension)."""
        return await self._io(self.service.history.export, transcript, Path(path), fmt, doing=f"exporting to {path}")

    # ---- embeddings, indexing and search (embedding worker) --------------------------------
    async def embed(self, texts: list[str]):
        return await self._await(self.service.search.embed(list(texts)), "embedding texts")

    async def search(self, query: str, k: int = 10, hybrid: bool = True, collection: str | None = None):
        """Hits for ``query`` in ``collection``, or (None) in every collection of the loaded embedding
        model ranked as one; a collection nothing was indexed into yet has no hits."""
        collections = None if collection is None else [collection]
        return await self._await(self.service.search.search(query, k, hybrid, collections, missing_ok=True),
                                 f"searching for '{query}'")

    async def index_paths(self, paths, collection: str = FILES, job_id: str | None = None):
        paths = [Path(p) for p in paths]
        job = self.service.search.index_paths(paths, collection, job_id)
        return await self._await(job, f"indexing {job.info.title}")

    async def index_transcript(self, record_id):
        return await self._await(self.service.search.index_record(record_id), "indexing a transcript")

    async def index_transcripts(self, job_id: str | None = None):
        """Make every transcript in the history searchable (a job: progress, cancel); an IndexReport."""
        return await self._await(self.service.search.index_transcripts(job_id), "indexing the transcripts")

    async def remove_sources(self, paths, collection: str = FILES) -> int:
        """Drop the indexed documents of files or folders; returns how many went."""
        return await self._await(self.service.search.remove_sources(paths, collection),
                                 "removing sources from the search index")

    # ---- playback ------------------------------------------------------------------------
    def play(self, audio_path: str, start: float = 0.0, end: float | None = None) -> asyncio.Future:
        return self._background(self._run(IO, play_audio, str(audio_path), start, end), "playing audio")

    def stop_playback(self) -> None:
        stop_audio()


def cache_hit_rate(caches) -> float | None:
    """Hit rate over ``caches`` (CacheStats) together, or None when nothing was looked up."""
    hits = sum(c.hits for c in caches)
    total = hits + sum(c.misses for c in caches)
    return hits / total if total else None


def play_audio(audio_path: str, start: float, end: float | None) -> bool:
    """Play a slice of a file on the default output device (runs in the I/O worker); True once it plays."""
    from executors.audio.decode import SAMPLE_RATE, load_audio
    from executors.core.errors import DeviceError

    try:
        import sounddevice as sd
    except OSError as exc:  # PortAudio library missing
        raise DeviceError(f"Audio playback is unavailable: {exc}", "install PortAudio (libportaudio2)") from exc
    audio = load_audio(audio_path)
    first = max(0, int(start * SAMPLE_RATE))
    last = len(audio) if end is None else min(len(audio), int(end * SAMPLE_RATE))
    try:
        sd.default.device  # noqa: B018 - raises early when PortAudio cannot enumerate devices
        sd.play(audio[first:last], SAMPLE_RATE)
    except Exception as exc:  # noqa: BLE001 - PortAudioError and friends
        raise DeviceError(f"Could not play audio: {exc}",
                          "check that an audio output device is connected and not in use") from exc
    return True


def stop_audio() -> None:
    try:
        import sounddevice as sd

        sd.stop()
    except Exception:  # noqa: BLE001 - nothing was playing, or no audio stack at all
        pass
