"""Text out of the files the index takes: plain text, Markdown, PDF, and transcripts this app writes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InvalidFormatError, wrap_unexpected
from .chunking import TimedText
from .types import DocKind

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".text"})
TRANSCRIPT_SUFFIXES = frozenset({".json", ".srt", ".vtt"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | TRANSCRIPT_SUFFIXES | {".pdf"}


@dataclass
class Extracted:
    kind: DocKind
    title: str
    text: str = ""  # for plain documents
    segments: list[TimedText] | None = None  # for transcripts


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def extract(path: Path, data: bytes) -> Extracted:
    """The indexable content of ``path`` whose bytes are ``data``; InvalidFormatError if unreadable."""
    suffix = path.suffix.lower()
    try:
        if suffix in TEXT_SUFFIXES:
            return Extracted(DocKind.FILE, path.name, text=decode_text(data))
        if suffix == ".pdf":
            return Extracted(DocKind.FILE, path.name, text=pdf_text(data, path))
        if suffix in TRANSCRIPT_SUFFIXES:
            return Extracted(DocKind.TRANSCRIPT, path.name, segments=transcript_file_segments(suffix, decode_text(data)))
    except InvalidFormatError as exc:
        raise InvalidFormatError(f"{path}: {exc.message}", exc.hint) from exc
    raise InvalidFormatError(f"{path}: files of type '{suffix or path.name}' cannot be indexed",
                             "index .txt, .md, .pdf, or transcript .json/.srt/.vtt files")


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), falling back to Latin-1 so no byte is ever refused."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def pdf_text(data: bytes, path: Path | None = None) -> str:
    """Text of every page, pages separated by a blank line."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InvalidFormatError("the PDF is encrypted", "save an unencrypted copy and index that")
        return "\n\n".join((page.extract_text() or "").strip() for page in reader.pages).strip()
    except (PdfReadError, ValueError, KeyError) as exc:
        raise InvalidFormatError(f"not a readable PDF ({exc})", "check that the file opens in a PDF viewer") from exc
    except InvalidFormatError:
        raise
    except Exception as exc:
        raise wrap_unexpected(exc, f"reading the PDF {path or ''}") from exc


def transcript_file_segments(suffix: str, text: str) -> list[TimedText]:
    from ..transcripts.exporters import parse_srt, parse_vtt, transcript_from_json

    if suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidFormatError(f"not JSON ({exc})", "index transcript JSON written by 'ferrum transcribe'") from exc
        if not isinstance(data, dict) or not isinstance(data.get("segments"), list):
            raise InvalidFormatError("this JSON file is not a transcript (no 'segments' list)",
                                     "index transcript JSON written by 'ferrum transcribe --format json'")
        return transcript_segments(transcript_from_json(data))
    cues = parse_srt(text) if suffix == ".srt" else parse_vtt(text)
    return [TimedText(i, start, end, cue) for i, (start, end, cue) in enumerate(cues)]


def transcript_segments(transcript) -> list[TimedText]:
    """The timed texts of a Whisper ``Transcript`` (segment ids kept)."""
    return [TimedText(int(s.id), float(s.start), float(s.end), s.text) for s in transcript.segments]
