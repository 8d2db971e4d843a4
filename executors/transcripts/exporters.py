"""Transcript files: TXT, SRT, WebVTT, OpenAI-style verbose JSON and RTTM, plus parsers to read them back.

A diarized transcript shows its speakers by name in every format: TXT as ``Name: text`` per turn,
SRT as ``[Name] text``, WebVTT as a ``<v Name>`` voice span, JSON as ``speaker`` on segments and
words plus a top-level ``speakers`` list, RTTM as one line per turn.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

from ..core.errors import InvalidFormatError, InvalidParameterError, IOError_
from .languages import language_code, language_name
from .results import Segment, Transcript, Word, default_speaker_name
from .rttm import rttm_lines


@dataclass(frozen=True)
class TranscriptFormat:
    """One output format, named once for the CLI, the app's save dialog and the API."""

    name: str        # what the CLI and the service take: --format srt
    title: str       # what a save dialog shows
    api_name: str    # OpenAI's response_format for the same file contents

    @property
    def suffix(self) -> str:
        return f".{self.name}"

    @property
    def file_filter(self) -> str:
        return f"{self.title} (*{self.suffix})"


FORMATS = {f.name: f for f in (
    TranscriptFormat("txt", "Plain text", "text"),
    TranscriptFormat("srt", "SubRip subtitles", "srt"),
    TranscriptFormat("vtt", "WebVTT subtitles", "vtt"),
    TranscriptFormat("json", "JSON with segments", "verbose_json"),
)}
EXPORT_FORMATS = tuple(FORMATS)
# only for transcripts with speakers, so not offered where any transcript can be saved
_SPEAKER_ONLY = {f.name: f for f in (TranscriptFormat("rttm", "RTTM speaker turns", "rttm"),)}
SPEAKER_FORMATS = tuple(_SPEAKER_ONLY)
_EVERY_FORMAT = {**FORMATS, **_SPEAKER_ONLY}


def export_format(fmt: str | None = None, path: str | os.PathLike | None = None) -> TranscriptFormat:
    """The format named by ``fmt``, else by ``path``'s extension, else plain text."""
    name = (fmt or (Path(path).suffix.lstrip(".") if path is not None else "") or "txt").lower()
    if name not in _EVERY_FORMAT:
        raise InvalidParameterError(f"Cannot write a transcript as '{name}'",
                                    f"use one of {', '.join(_EVERY_FORMAT)} (or a file name ending in one)")
    return _EVERY_FORMAT[name]

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


def speaker_turns(transcript: Transcript) -> list[tuple[str | None, list[Segment]]]:
    """Runs of consecutive non-empty segments of one speaker (one run per segment when undiarized)."""
    runs: list[tuple[str | None, list[Segment]]] = []
    for seg in (s for s in transcript.segments if s.text.strip()):
        if runs and seg.speaker and runs[-1][0] == seg.speaker:
            runs[-1][1].append(seg)
        else:
            runs.append((seg.speaker, [seg]))
    return runs


def to_txt(transcript: Transcript) -> str:
    """One line per segment (like Whisper's own CLI); with speakers, one ``Name: text`` line per turn."""
    if not transcript.speakers:
        return "".join(f"{s.text.strip()}\n" for s in transcript.segments if s.text.strip())
    lines = []
    for speaker, segs in speaker_turns(transcript):
        text = " ".join(s.text.strip() for s in segs)
        lines.append(f"{transcript.speaker_name(speaker)}: {text}\n" if speaker else f"{text}\n")
    return "".join(lines)


def _labelled(transcript: Transcript, seg: Segment, fmt: str) -> str:
    text = _cue_text(seg.text)
    if not seg.speaker:
        return text
    name = transcript.speaker_name(seg.speaker)
    if fmt == "vtt":  # WebVTT's voice span; '<', '>' and '&' are not allowed inside its annotation
        return f"<v {name.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}>{text}"
    return f"[{name}] {text}"


def to_srt(transcript: Transcript) -> str:
    cues = []
    for n, seg in enumerate((s for s in transcript.segments if s.text.strip()), start=1):
        cues.append(f"{n}\n{format_timestamp(seg.start, 'srt')} --> {format_timestamp(seg.end, 'srt')}\n"
                    f"{_labelled(transcript, seg, 'srt')}\n")
    return "\n".join(cues)


def to_vtt(transcript: Transcript) -> str:
    cues = [f"{format_timestamp(s.start, 'vtt')} --> {format_timestamp(s.end, 'vtt')}\n"
            f"{_labelled(transcript, s, 'vtt')}\n"
            for s in transcript.segments if s.text.strip()]
    return "WEBVTT\n\n" + "\n".join(cues)


def to_rttm(transcript: Transcript, file_id: str = "audio") -> str:
    """Speaker turns by name, timed by words where the transcript has them."""
    if not transcript.speakers:
        raise InvalidParameterError("This transcript has no speakers to write as RTTM",
                                    "transcribe it with speakers (the Speakers option, or --diarize) first")
    turns = []
    for seg in transcript.segments:
        if seg.words:
            turns += [(w.start, w.end, transcript.speaker_name(w.speaker or seg.speaker)) for w in seg.words]
        elif seg.speaker:
            turns.append((seg.start, seg.end, transcript.speaker_name(seg.speaker)))
    merged: list[tuple[float, float, str]] = []
    for start, end, name in turns:  # words of one speaker with no one else between them: one turn
        if merged and merged[-1][2] == name and start - merged[-1][1] < 0.5:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), name)
        else:
            merged.append((start, end, name))
    return rttm_lines(merged, file_id)


def to_verbose_json(transcript: Transcript) -> dict:
    """The shape of OpenAI's ``verbose_json`` response (language as a full name, words at top level).

    ``seek`` is the segment start in 10 ms frames; each word also carries its probability.
    With speakers, each segment and word also has ``speaker`` (the shown name) and the top level
    lists ``speakers`` as ``{"id": label, "name": name}`` in order of first appearance.
    """
    diarized = bool(transcript.speakers)

    def named(d: dict, label: str | None) -> dict:
        if diarized:
            d["speaker"] = transcript.speaker_name(label) if label else None
        return d

    data = {
        "task": transcript.task,
        "language": language_name(transcript.language),
        "duration": transcript.duration,
        "text": transcript.text,
        "segments": [named({
            "id": s.id, "seek": int(s.start * 100), "start": s.start, "end": s.end, "text": s.text,
            "tokens": list(s.tokens), "temperature": s.temperature, "avg_logprob": s.avg_logprob,
            "compression_ratio": s.compression_ratio, "no_speech_prob": s.no_speech_prob,
        }, s.speaker) for s in transcript.segments],
    }
    if any(s.words for s in transcript.segments):
        data["words"] = [named({"word": w.word, "start": w.start, "end": w.end, "probability": w.probability},
                               w.speaker or s.speaker)
                         for s in transcript.segments for w in (s.words or [])]
    if diarized:
        data["speakers"] = [{"id": label, "name": transcript.speaker_name(label)} for label in transcript.speakers]
    return data


def _segment_from(d: dict, index: int, label_of: dict[str, str]) -> Segment:
    words = d.get("words")
    return Segment(speaker=_label(d, label_of),
        id=int(d.get("id", index)), start=float(d["start"]), end=float(d["end"]), text=str(d["text"]),
        tokens=list(d.get("tokens") or []), avg_logprob=float(d.get("avg_logprob", 0.0)),
        compression_ratio=float(d.get("compression_ratio", 0.0)),
        no_speech_prob=float(d.get("no_speech_prob", 0.0)), temperature=float(d.get("temperature", 0.0)),
        words=[_word_from(w, label_of) for w in words] if words is not None else None)


def _label(d: dict, label_of: dict[str, str]) -> str | None:
    name = d.get("speaker")
    return None if name is None else label_of.get(str(name), str(name))


def _word_from(d: dict, label_of: dict[str, str]) -> Word:
    return Word(start=float(d["start"]), end=float(d["end"]), word=str(d["word"]),
                probability=float(d.get("probability", 1.0)), speaker=_label(d, label_of))


def _speaker_names(data: dict) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> label, label -> user-given name) from a ``speakers`` list or a ``speaker_names`` dict."""
    pairs = [(str(s["id"]), str(s.get("name") or s["id"])) for s in data.get("speakers") or []]
    pairs += [(str(k), str(v)) for k, v in (data.get("speaker_names") or {}).items()]
    label_of = {name: label for label, name in pairs}
    given = {label: name for label, name in pairs if name != default_speaker_name(label)}
    return label_of, given


def transcript_from_json(data: dict | str) -> Transcript:
    """A ``Transcript`` from ``to_verbose_json`` output (or ``Transcript.to_dict()``), dict or JSON text.

    Top-level words are put back into the segment whose time range holds their midpoint.
    """
    try:
        if isinstance(data, str):
            data = json.loads(data)
        label_of, given = _speaker_names(data)
        segments = [_segment_from(d, i, label_of) for i, d in enumerate(data.get("segments") or [])]
        words = [_word_from(w, label_of) for w in data.get("words") or []]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidFormatError(f"Not a transcript JSON document: {exc}",
                                 "use a file written by 'ferrum transcribe --format json'") from exc
    for word in words:
        mid = (word.start + word.end) / 2
        home = next((s for s in segments if s.start <= mid <= s.end), None)
        home = home or min(segments, key=lambda s: min(abs(s.start - mid), abs(s.end - mid)), default=None)
        if home is not None:
            home.words = (home.words or []) + [word]
    return Transcript(language=language_code(str(data.get("language", ""))),
                      language_probability=float(data.get("language_probability", 1.0)),
                      duration=float(data.get("duration", segments[-1].end if segments else 0.0)),
                      segments=segments, task=str(data.get("task", "transcribe")),
                      model_id=str(data.get("model_id", "")), speaker_names=given)


def render_transcript(transcript: Transcript, fmt: str, file_id: str = "audio") -> str:
    """The file contents of ``transcript`` in ``fmt`` (``EXPORT_FORMATS`` or ``SPEAKER_FORMATS``); ``file_id`` names
    the recording in RTTM."""
    fmt = fmt.lower()
    if fmt == "json":
        return json.dumps(to_verbose_json(transcript), ensure_ascii=False, indent=2) + "\n"
    if fmt == "rttm":
        return to_rttm(transcript, file_id)
    writers = {"txt": to_txt, "srt": to_srt, "vtt": to_vtt}
    if fmt not in writers:
        raise InvalidParameterError(f"Unknown transcript format '{fmt}'",
                                    f"use one of {', '.join(EXPORT_FORMATS + SPEAKER_FORMATS)}")
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
    text = render_transcript(transcript, fmt, Path(dest).stem if not hasattr(dest, "write") else "audio")
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
