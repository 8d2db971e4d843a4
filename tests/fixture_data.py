"""The repository's own test data (``tests/data``, sources and licences in its README).

The quick tier reads only these; the full evaluation sets go through ``speech_eval`` / ``eval_*`` fixtures.
``SPEECH`` has speech-dev's layout (``asterisk/``, ``pocketsphinx/``, ``transcripts.tsv``), so the
``bench.common`` readers work on it unchanged.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench import conversations  # noqa: E402
from bench.common import Utterance, load_speech_dev, long_audio  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
SPEECH = DATA / "speech"              # 50 short clips: 37 telephone prompts (one voice), 13 pocketsphinx/LibriVox
TEXT = DATA / "text"                  # newsgroups_mini.jsonl: all 200 posts of text-dev
DIARIZATION = DATA / "diarization"    # one 30 s, 4-speaker meeting excerpt with RTTM and UEM
LONG_SPEECH = SPEECH / "long" / "asterisk-60s.flac"   # ~1 min of whole sentences, one voice


def speech_utterances() -> list[Utterance]:
    """Every short clip with its reference, sorted by path."""
    return load_speech_dev(SPEECH)


def utterance(rel: str) -> Utterance:
    """One clip by its path relative to ``SPEECH`` (e.g. ``"pocketsphinx/goforward.flac"``)."""
    return next(u for u in speech_utterances() if u.path == SPEECH / rel)


def long_speech_reference() -> str:
    rows = (LONG_SPEECH.with_suffix(".tsv")).read_text(encoding="utf-8").splitlines()[1:]
    return " ".join(row.split("\t")[3] for row in rows if row.strip())


def long_speech(seconds: float | None = None, gap: float = 0.5) -> tuple[np.ndarray, str]:
    """The joined minute and its reference; with ``seconds``, followed by the short clips in order
    (``gap`` s apart) until the audio is that long."""
    utterances = [Utterance(LONG_SPEECH, long_speech_reference())]
    if seconds is not None:
        utterances += speech_utterances()
    return long_audio(utterances, seconds=seconds or 0.0, gap=gap)


def conversation(voices: list[str], n_turns: int, seed: int) -> conversations.Conversation:
    """A seeded turn-taking conversation of ``voices`` (asterisk, librivox, cards) joined from these clips."""
    return conversations.conversation(voices, n_turns, seed, root=SPEECH)


def single_voice(voice: str, n_clips: int, seed: int) -> conversations.Conversation:
    return conversations.single_voice(voice, n_clips, seed, root=SPEECH)


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF drawing ``text`` in Helvetica, assembled by hand (offsets in the xref table)."""
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    stream = zlib.compress(content)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
         b" /Resources << /Font << /F1 5 0 R >> >> >>"),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
