"""``assign_speakers(transcript, diarization) -> Transcript``: who said each word and segment.

With word timestamps, each word goes to the speaker whose turns cover most of it (the nearest turn
when it falls in a gap), and a Whisper segment is cut where the speaker changes between words, so
one segment never holds two voices. Without words, a segment goes to the speaker who covers most of
it. Every word and segment gets a speaker: one far from every turn takes its neighbours' speaker,
else the nearest turn's, and with no turns at all the one speaker ``SPEAKER_00`` (what was
transcribed was said by someone). ``diarize_transcript`` diarizes with the transcript's words as speech
evidence, then assigns. The input transcript is left unchanged.
"""

from __future__ import annotations

import bisect
from dataclasses import replace

from ..core.types import CancelToken
from ..transcripts.results import Segment, Transcript, Word
from .engine import ProgressFn, diarize
from .heard import transcript_speech
from .options import Diarization, DiarizationOptions, SpeakerTurn, speaker_label

# A change of speaker for less than this many seconds of words inside a segment is kept with its
# neighbours: a lone word is more often a turn edge a little off than a real interjection.
MIN_RUN_S = 0.3
NEAREST_TURN_S = 1.0  # words further than this from any turn get their neighbours' speaker


class _TurnIndex:
    def __init__(self, turns: list[SpeakerTurn]):
        self.turns = sorted(turns, key=lambda t: t.start)
        self._starts = [t.start for t in self.turns]
        self._max_len = max((t.duration for t in self.turns), default=0.0)

    def speaker(self, start: float, end: float) -> str | None:
        """The speaker covering most of [start, end], else the nearest within NEAREST_TURN_S."""
        if not self.turns:
            return None
        lo = bisect.bisect_left(self._starts, start - self._max_len)
        hi = bisect.bisect_right(self._starts, end)
        cover: dict[str, float] = {}
        for turn in self.turns[lo:hi]:
            overlap = min(end, turn.end) - max(start, turn.start)
            if overlap > 0:
                cover[turn.speaker] = cover.get(turn.speaker, 0.0) + overlap
        if cover:
            return max(cover, key=cover.__getitem__)
        nearest, distance = self._nearest(start, end)
        return nearest.speaker if distance <= NEAREST_TURN_S else None

    def _nearest(self, start: float, end: float) -> tuple[SpeakerTurn, float]:
        mid = (start + end) / 2
        nearest = min(self.turns, key=lambda t: max(t.start - mid, mid - t.end, 0.0))
        return nearest, max(nearest.start - mid, mid - nearest.end, 0.0)

    def nearest_speaker(self, start: float, end: float) -> str:
        """The speaker of the turn nearest to [start, end] at any distance (SPEAKER_00 without turns)."""
        return self._nearest(start, end)[0].speaker if self.turns else speaker_label(0)


def _fill_gaps(labels: list[str | None]) -> list[str | None]:
    """Unknown speakers take the previous known one (or the next, at the start)."""
    out, last = list(labels), None
    for i, label in enumerate(out):
        if label is None:
            out[i] = last
        last = out[i]
    nxt = None
    for i in range(len(out) - 1, -1, -1):
        if out[i] is None:
            out[i] = nxt
        nxt = out[i]
    return out


def _merge_short_runs(words: list[Word], labels: list[str | None]) -> list[str | None]:
    runs: list[list[int]] = []
    for i, label in enumerate(labels):
        if runs and labels[runs[-1][0]] == label:
            runs[-1].append(i)
        else:
            runs.append([i])
    if len(runs) < 2:
        return labels
    out = list(labels)
    for k, run in enumerate(runs):
        length = words[run[-1]].end - words[run[0]].start
        if length < MIN_RUN_S:
            neighbour = runs[k - 1] if k > 0 else runs[k + 1]
            for i in run:
                out[i] = out[neighbour[0]]
    return out


def _split_by_speaker(seg: Segment, index: _TurnIndex) -> list[Segment]:
    words = seg.words or []
    labels = _fill_gaps([index.speaker(w.start, w.end) for w in words])
    labels = _merge_short_runs(words, [label or index.nearest_speaker(w.start, w.end)
                                       for w, label in zip(words, labels)])
    words = [replace(w, speaker=label) for w, label in zip(words, labels)]
    pieces: list[list[Word]] = []
    for word in words:
        if pieces and pieces[-1][-1].speaker == word.speaker:
            pieces[-1].append(word)
        else:
            pieces.append([word])
    if len(pieces) <= 1:
        return [replace(seg, words=words, speaker=labels[0] if labels else index.speaker(seg.start, seg.end))]
    out = []
    for n, piece in enumerate(pieces):
        start = seg.start if n == 0 else piece[0].start
        end = seg.end if n == len(pieces) - 1 else piece[-1].end
        text = "".join(w.word for w in piece)
        out.append(replace(seg, start=start, end=end, text=text if n == 0 else " " + text.lstrip(),
                           tokens=[], words=piece, speaker=piece[0].speaker))
    return out


def assign_speakers(transcript: Transcript, diarization: Diarization) -> Transcript:
    """A copy of ``transcript`` with ``speaker`` on every segment and word, split at speaker changes.

    Segment ids are renumbered in order; user-given names in ``speaker_names`` are kept.
    """
    index = _TurnIndex(diarization.turns)
    segments: list[Segment] = []
    for seg in transcript.segments:
        if seg.words:
            segments.extend(_split_by_speaker(seg, index))
        else:
            segments.append(replace(seg, speaker=index.speaker(seg.start, seg.end)))
    labels = _fill_gaps([s.speaker for s in segments])
    segments = [replace(s, id=i, speaker=label or index.nearest_speaker(s.start, s.end))
                for i, (s, label) in enumerate(zip(segments, labels))]
    return replace(transcript, segments=segments, speaker_names=dict(transcript.speaker_names))


def diarize_transcript(transcript: Transcript, audio, options: DiarizationOptions | None = None, *,
                       on_progress: ProgressFn | None = None, cancel: CancelToken | None = None) -> Transcript:
    """``transcript`` of ``audio`` with every word and segment given a speaker; its words are speech evidence."""
    heard = transcript_speech(transcript)
    return assign_speakers(transcript, diarize(audio, options, heard=heard, on_progress=on_progress, cancel=cancel))
