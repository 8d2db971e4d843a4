"""What a batch run works on: the audio files behind the sources given, and where each output goes.

A source is an audio/video file, a folder (searched recursively; hidden entries skipped) or a
list file (``.txt``/``.lst``/``.list``: one path per line, ``#`` comments, relative paths taken
from the list file's folder). A file found under a folder keeps its place below that folder
in the output directory (``talks/2019/a.mp3`` -> ``OUT/2019/a.txt``); a file named directly or
in a list goes to the top of it. The plan is deterministic: the same sources give the same
outputs in every run, which is what lets a second run skip the finished ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InvalidParameterError, NotFoundError

AUDIO_SUFFIXES = frozenset({
    ".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac", ".mp4", ".m4v", ".mov", ".webm",
    ".mkv", ".mka", ".wma", ".amr", ".3gp", ".aif", ".aiff", ".caf", ".w64",
})
LIST_SUFFIXES = frozenset({".txt", ".lst", ".list"})
SUMMARY_NAME = "ferrum-batch-summary.json"


@dataclass(frozen=True)
class BatchItem:
    """One audio file and the transcript file it becomes."""

    index: int
    source: Path
    output: Path


def _walk(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [Path(dirpath) / n for n in sorted(filenames)
                  if not n.startswith(".") and Path(n).suffix.lower() in AUDIO_SUFFIXES]
    return found


def _read_list(list_file: Path) -> list[Path]:
    paths = []
    for line in list_file.read_text(encoding="utf-8-sig").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            path = Path(line).expanduser()
            paths.append(path if path.is_absolute() else list_file.parent / path)
    return paths


def _expand(source: Path, from_list: bool) -> list[tuple[Path, Path | None]]:
    """(audio file, folder it was found under or None) for one source."""
    if source.is_dir():
        return [(f, source) for f in _walk(source)]
    if not source.exists():
        raise NotFoundError(f"{source} does not exist", "check the path (a list file's paths are relative to it)")
    if source.suffix.lower() in LIST_SUFFIXES and not from_list:
        return [pair for p in _read_list(source) for pair in _expand(p, from_list=True)]
    return [(source, None)]


def plan_items(sources: list[str | os.PathLike], output_dir: Path, fmt: str) -> list[BatchItem]:
    """Every audio file under ``sources`` (each once, in a stable order) with its output path.

    Two files that would share an output name get ``-2``, ``-3``, ... in path order, so the
    plan does not depend on the order the sources are given in."""
    if not sources:
        raise InvalidParameterError("No sources given", "name audio files, folders or a list file")
    found: dict[Path, Path | None] = {}
    for raw in sources:
        for path, root in _expand(Path(raw).expanduser().absolute(), from_list=False):
            known = found.get(path)
            if path not in found or (root is not None and (known is None or len(root.parts) < len(known.parts))):
                found[path] = root  # a file under several sources keeps the outermost folder's layout
    taken = {Path(SUMMARY_NAME)}
    items = []
    for path in sorted(found):
        root = found[path]
        relative = path.relative_to(root).parent if root is not None else Path()
        stem, n = path.stem, 2
        candidate = relative / f"{stem}.{fmt}"
        while candidate in taken:
            candidate, n = relative / f"{stem}-{n}.{fmt}", n + 1
        taken.add(candidate)
        items.append(BatchItem(len(items), path, output_dir / candidate))
    return items
