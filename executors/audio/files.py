"""Which files of a selection can be transcribed: folders are searched (recursively) for audio and
video files, and what was left out is counted with the reason, so a user is told rather than guessing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

AUDIO_SUFFIXES = frozenset({".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac", ".wma", ".aif",
                            ".aiff", ".amr", ".mka", ".3gp"})
VIDEO_SUFFIXES = frozenset({".mp4", ".m4v", ".mkv", ".mov", ".webm", ".avi"})
MEDIA_SUFFIXES = AUDIO_SUFFIXES | VIDEO_SUFFIXES


def is_media(path: Path) -> bool:
    return path.suffix.lower() in MEDIA_SUFFIXES


@dataclass
class MediaSelection:
    files: list[Path] = field(default_factory=list)            # to transcribe, in folder order
    not_media: dict[str, int] = field(default_factory=dict)    # files of folders skipped, per suffix
    hidden: int = 0                                            # hidden files and folders' files skipped
    missing: list[Path] = field(default_factory=list)          # paths that do not exist
    folders: int = 0                                           # folders searched (given, not nested)

    @property
    def skipped(self) -> int:
        return sum(self.not_media.values()) + self.hidden

    def skipped_text(self) -> str:
        """"3 skipped: 2 not audio or video (.txt ×2), 1 hidden" ("" when nothing was skipped)."""
        reasons = []
        if self.not_media:
            n = sum(self.not_media.values())
            kinds = ", ".join(f"{s} ×{c}" if c > 1 else s for s, c in sorted(self.not_media.items(), key=lambda kv: -kv[1]))
            reasons.append(f"{n} not audio or video ({kinds})")
        if self.hidden:
            reasons.append(f"{self.hidden} hidden")
        return f"{self.skipped} skipped: " + ", ".join(reasons) if reasons else ""


def select_media(paths: Iterable[str | os.PathLike]) -> MediaSelection:
    """Files to transcribe from files and folders: a file given by name is taken as it is (the
    decoder decides); a folder gives its audio and video files, subfolders included, in name order."""
    out = MediaSelection()
    seen: set[Path] = set()

    def take(path: Path) -> None:
        if path not in seen:
            seen.add(path)
            out.files.append(path)

    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            out.folders += 1
            for dirpath, dirnames, filenames in os.walk(path):
                hidden_dirs = [d for d in dirnames if d.startswith(".")]
                out.hidden += sum(len(files) for d in hidden_dirs for _, _, files in os.walk(Path(dirpath) / d))
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    file = Path(dirpath) / name
                    if name.startswith("."):
                        out.hidden += 1
                    elif is_media(file):
                        take(file)
                    else:
                        suffix = file.suffix.lower() or "(no extension)"
                        out.not_media[suffix] = out.not_media.get(suffix, 0) + 1
        elif path.is_file():
            take(path)
        else:
            out.missing.append(path)
    return out
