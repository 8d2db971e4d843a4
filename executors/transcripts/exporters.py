"""Transcript files: TXT, SRT, WebVTT and OpenAI-style verbose JSON, plus parsers to read them back."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import IO, Union

from ..core.errors import InvalidFormatError, InvalidParameterError, IOError_
from .results import Segment, Transcript, Word

EXPORT_FORMATS = ("txt", "srt", "vtt", "json")

Destination = Union[str, os.PathLike, IO[str]]


def format_timestamp(seconds: float, fmt: str = "srt") -> str:
    """``HH:MM:SS,mmm`` (SRT) or ``HH:MM:SS.mmm`` (VTT); rounded to whole milliseconds first."""
    total_ms = max(0, int(round(seconds * 1000)))
    hours, rest = divmod(total_ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, ms = divmod(rest, 1000)
    sep = "," if fmt == "srt" else "."
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{sep}{ms:03d}"


def _cue_text(text: str) -> str:
    # A blank line ends a cue and "-->" marks a timing line, so neither may appear inside one.
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines).replace("-->", "->")


def to_txt(transcript: Transcript) -> str:
    """One line per segment (like Whisper's own CLI)."""
    return "".join(f"{s.text.strip()}\n" for s in transcript.segments if s.text.strip())


def to_srt(transcript: Transcript) -> str:
    cues = []
    for n, seg in enumerate((s for s in transcript.segments if s.text.strip()), start=1):
        cues.append(f"{n}\n{format_timestamp(seg.start, 'srt')} --> {format_timestamp(seg.end, 'srt')}\n"
                    f"{_cue_text(seg.text)}\n")
    return "\n".join(cues)


def to_vtt(transcript: Transcript) -> str:
    cues = [f"{format_timestamp(s.start, 'vtt')} --> {format_timestamp(s.end, 'vtt')}\n{_cue_text(s.text)}\n"
            for s in transcript.segments if s.text.strip()]
    return "WEBVTT\n\n" + "\n".join(cues)


def _language_name(code: str) -> str:
    try:
        from transformers.models.whisper.tokenization_whisper import LANGUAGES
    except ImportError:  # pragma: no cover - transformers is a hard dependency
        return code
    return LANGUAGES.get(code, code)


def _language_code(name: str) -> str:
    try:
        from transformers.models.whisper.tokenization_whisper import TO_LANGUAGE_CODE
    except ImportError:  # pragma: no cover
        return name
    return TO_LANGUAGE_CODE.get(name.lower(), name)


def to_verbose_json(transcript: Transcript) -> dict:
    """The shape of OpenAI's ``verbose_json`` response (language as a full name, words at top level).

    ``seek`` is the segment start in 10 ms frames; each word also carries its probability.
    """
    data = {
        "task": transcript.task,
        "language": _language_name(transcript.language),
        "duration": transcript.duration,
        "text": transcript.text,
        "segments": [{
            "id": s.id, "seek": int(s.start * 100), "start": s.start, "end": s.end, "text": s.text,
            "tokens": list(s.tokens), "temperature": s.temperature, "avg_logprob": s.avg_logprob,
            "compression_ratio": s.compression_ratio, "no_speech_prob": s.no_speech_prob,
        } for s in transcript.segments],
    }
    if any(s.words for s in transcript.segments):
        data["words"] = [{"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                         for s in transcript.segments for w in (s.words or [])]
    return data


def _segment_from(d: dict, index: int) -> Segment:
    words = d.get("words")
    return Segment(
        id=int(d.get("id", index)), start=float(d["start"]), end=float(d["end"]), text=str(d["text"]),
        tokens=list(d.get("tokens") or []), avg_logprob=float(d.get("avg_logprob", 0.0)),
        compression_ratio=float(d.get("compression_ratio", 0.0)),
        no_speech_prob=float(d.get("no_speech_prob", 0.0)), temperature=float(d.get("temperature", 0.0)),
        words=[_word_from(w) for w in words] if words is not None else None)


def _word_from(d: dict) -> Word:
    return Word(start=float(d["start"]), end=float(d["end"]), word=str(d["word"]),
                probability=float(d.get("probability", 1.0)))


def transcript_from_json(data: dict | str) -> Transcript:
    """A ``Transcript`` from ``to_verbose_json`` output (or ``Transcript.to_dict()``), dict or JSON text.

    Top-level words are put back into the segment whose time range holds their midpoint.
    """
    try:
        if isinstance(data, str):
            data = json.loads(data)
        segments = [_segment_from(d, i) for i, d in enumerate(data.get("segments") or [])]
        words = [_word_from(w) for w in data.get("words") or []]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidFormatError(f"Not a transcript JSON document: {exc}",
                                 "use a file written by 'ferrum transcribe --format json'") from exc
    for word in words:
        mid = (word.start + word.end) / 2
        home = next((s for s in segments if s.start <= mid <= s.end), None)
        home = home or min(segments, key=lambda s: min(abs(s.start - mid), abs(s.end - mid)), default=None)
        if home is not None:
            home.words = (home.words or []) + [word]
    return Transcript(language=_language_code(str(data.get("language", ""))),
                      language_probability=float(data.get("language_probability", 1.0)),
                      duration=float(data.get("duration", segments[-1].end if segments else 0.0)),
                      segments=segments, task=str(data.get("task", "transcribe")),
                      model_id=str(data.get("model_id", "")))


def render_transcript(transcript: Transcript, fmt: str) -> str:
    """The file contents of ``transcript`` in ``fmt`` (one of ``EXPORT_FORMATS``)."""
    fmt = fmt.lower()
    if fmt == "json":
        return json.dumps(to_verbose_json(transcript), ensure_ascii=False, indent=2) + "\n"
    writers = {"txt": to_txt, "srt": to_srt, "vtt": to_vtt}
    if fmt not in writers:
        raise InvalidParameterError(f"Unknown transcript format '{fmt}'", f"use one of {', '.join(EXPORT_FORMATS)}")
    return writers[fmt](transcript)


def export_target(path: str | Path, fallback: str | None = None) -> tuple[Path, str]:
    """Where to write and in which format, for a file name the user gave.

    A known extension (``notes.vtt``) decides the format, whatever else was chosen; a name without
    one gets ``fallback``'s extension (``notes`` → ``notes.srt``); ``fallback`` defaults to txt."""
    path = Path(path)
    typed = path.suffix.lower().lstrip(".")
    if typed in EXPORT_FORMATS:
        return path, typed
    fmt = (fallback or "txt").lower()
    if fmt not in EXPORT_FORMATS:
        raise InvalidParameterError(f"Cannot export as '{fmt}'", f"use one of {', '.join(EXPORT_FORMATS)}")
    return path.with_name(f"{path.name}.{fmt}"), fmt


def write_transcript(transcript: Transcript, fmt: str, dest: Destination) -> Path | None:
    """Write ``transcript`` as ``fmt`` to a path (UTF-8; returns it) or to an open text file."""
    text = render_transcript(transcript, fmt)
    if hasattr(dest, "write"):
        dest.write(text)
        return None
    path = Path(dest)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise IOError_(f"Cannot write {path}: {exc.strerror or exc}",
                       "check the folder exists and is writable") from exc
    return path


_TIME = r"(?:(\d+):)?(\d{1,2}):(\d{2})[,.](\d{1,3})"
_TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}")


def _seconds(h: str | None, m: str, s: str, frac: str) -> float:
    return int(h or 0) * 3600 + int(m) * 60 + int(s) + int(frac.ljust(3, "0")) / 1000


def _parse_cues(text: str, kind: str) -> list[tuple[float, float, str]]:
    cues: list[tuple[float, float, str]] = []
    blocks = re.split(r"\n\s*\n", text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").strip())
    for block in blocks:
        lines = block.split("\n")
        at = next((i for i, line in enumerate(lines) if "-->" in line), None)
        if at is None:
            continue  # WEBVTT header, NOTE, STYLE or REGION block
        match = _TIMING.match(lines[at])
        if not match or at > 1:
            raise InvalidFormatError(f"Bad {kind} cue timing: {lines[at].strip()!r}",
                                     "expected 'HH:MM:SS,mmm --> HH:MM:SS,mmm'")
        g = match.groups()
        cues.append((_seconds(*g[:4]), _seconds(*g[4:]), "\n".join(lines[at + 1:]).strip()))
    return cues


def parse_srt(text: str) -> list[tuple[float, float, str]]:
    """(start, end, text) of each SRT cue."""
    return _parse_cues(text, "SRT")


def parse_vtt(text: str) -> list[tuple[float, float, str]]:
    """(start, end, text) of each WebVTT cue (cue settings after the end time are ignored)."""
    if not text.lstrip("\ufeff").startswith("WEBVTT"):
        raise InvalidFormatError("Not a WebVTT file: it must start with 'WEBVTT'", "pass the .vtt file's text")
    return _parse_cues(text, "WebVTT")
