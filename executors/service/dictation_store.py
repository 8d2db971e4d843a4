"""Unsaved dictation on disk, so that a crash does not lose it.

Each recorded session keeps its text beside its recording in the scratch folder (``<recording>.session.json``,
rewritten whenever an utterance ends, the session ends or the user corrects it; removed when it is saved
or discarded). The scratch folder hands these files, with their recordings, to the next process
(``ScratchFolder(keep=MARKER)``), which turns them back into ended, unsaved sessions.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MARKER = ".session.json"


@dataclass
class StoredSession:
    source: str
    audio_path: Path
    started: float
    model_id: str
    language: str
    utterances: list[tuple[float, float, str]]
    audio_seconds: float


def sidecar(audio_path: Path) -> Path:
    return audio_path.with_name(audio_path.name + MARKER)


def write(stored: StoredSession) -> None:
    """Replace the session's file at once (a crash mid-write leaves the previous one)."""
    data = {"source": stored.source, "started": stored.started, "model_id": stored.model_id,
            "language": stored.language, "audio_seconds": stored.audio_seconds,
            "utterances": [list(u) for u in stored.utterances]}
    path = sidecar(stored.audio_path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, path)


def remove(audio_path: Path) -> None:
    sidecar(audio_path).unlink(missing_ok=True)


def read(marker: Path) -> StoredSession | None:
    """The session a marker file describes (None, logged, when it cannot be read: it is left alone)."""
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        return StoredSession(str(data["source"]), marker.with_name(marker.name[: -len(MARKER)]),
                             float(data["started"]), str(data["model_id"]), str(data["language"]),
                             [(float(s), float(e), str(t)) for s, e, t in data["utterances"]],
                             float(data["audio_seconds"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("cannot restore the dictation session in %s: %s", marker, exc)
        return None
