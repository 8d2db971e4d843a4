"""RTTM, the NIST speaker-turn format that diarization scorers read: one ``SPEAKER`` line per turn.

``SPEAKER <file> 1 <start> <duration> <NA> <NA> <speaker> <NA> <NA>``; fields are separated by
white space, so spaces inside file ids and speaker names become underscores.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.errors import InvalidFormatError


def _token(text: str) -> str:
    return "_".join(str(text).split()) or "NA"


def rttm_lines(turns: Iterable[tuple[float, float, str]], file_id: str) -> str:
    """The RTTM text of (start, end, speaker) turns."""
    out = []
    for start, end, speaker in turns:
        if end > start:
            out.append(f"SPEAKER {_token(file_id)} 1 {start:.3f} {end - start:.3f} <NA> <NA> {_token(speaker)} <NA> <NA>\n")
    return "".join(out)


def parse_rttm(text: str) -> dict[str, list[tuple[float, float, str]]]:
    """(start, end, speaker) turns of each file id in an RTTM document (non-SPEAKER lines skipped)."""
    files: dict[str, list[tuple[float, float, str]]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0] != "SPEAKER":
            continue
        try:
            start, duration = float(fields[3]), float(fields[4])
            files.setdefault(fields[1], []).append((start, start + duration, fields[7]))
        except (IndexError, ValueError) as exc:
            raise InvalidFormatError(f"Bad RTTM line {n}: {line.strip()!r}",
                                     "expected 'SPEAKER file 1 start duration <NA> <NA> name <NA> <NA>'") from exc
    return files
