"""Speech the transcript heard: its words' times as speech evidence, and a voice for what only they hold.

Whisper's words mark speech that Silero VAD and the segmentation network may miss (a quiet, distant or
muffled voice). Their spans join the frames where speech is heard. A stretch of heard frames (words'
or the VAD's) that no local speaker covers goes, when it is long enough for a steady voice print, to
the voice its CAM++ print matches best (its level raised first: a quiet stretch's filterbank would sit
on the log floor); shorter ones go to the nearest speaker in time (``turns.fill_heard_speech``).
Measured on joined two-voice conversations with one turn 50 dB down and its words given (8 cases):
the voice print gave 87 % of those turns to their own voice, the nearest speaker in time 12 % (in a
conversation the neighbours in time are mostly the other person); prints of 0.6 s were still right,
so MIN_PRINT_S keeps the voice prints' own 1 s for a steady print. On the meeting excerpts, though, such
stretches are murmur whose print matches no voice (cosine 0.1-0.37, the best barely ahead) and the
nearest speaker in time was right: a print must match a voice as closely as the clustering merges
(MIN_PRINT_SIMILARITY), else the nearest speaker in time takes the stretch. Words never make a new
speaker: a word's time can be off by a few hundred ms, and it only says that someone talks there.
Only the words of segments Whisper is sure of count: hallucinated text over murmur is not speech.
"""

from __future__ import annotations

import numpy as np

from . import features
from .activity import frame_spans, frame_start
from .clustering import centroids as voice_centroids
from .segmenter import SAMPLE_RATE
from .voiceprints import VoicePrints, embed

MIN_PRINT_S = 1.0      # a stretch nobody's voice covers gets a voice print from this long; nearest in time below
JOIN_PAUSE_S = 0.3     # such stretches this close together are one stretch (pauses between words)
PRINT_RMS = 0.05       # level the stretch is brought to before its voice print
MIN_PRINT_SIMILARITY = 0.5  # cosine; 1 - the clustering's default merge distance (DiarizationOptions.threshold)
# On the meeting excerpts (bench/diarize_words.py), words of segments Whisper is less sure of lie mostly
# where nobody talks (tiny.en writing sentences into far-off murmur): 10.7 s of false speech for 3.3 s
# of true; from 0.6 on, 0.7 s for 2.9 s.
MIN_SEGMENT_PROBABILITY = 0.6


def transcript_speech(transcript) -> list[tuple[float, float]]:
    """(start, end) seconds of the timed words of ``transcript`` where Whisper heard someone talk: those of
    segments whose words it is sure of on average (MIN_SEGMENT_PROBABILITY)."""
    spans = []
    for seg in transcript.segments:
        words = seg.words or []
        if words and sum(w.probability for w in words) / len(words) >= MIN_SEGMENT_PROBABILITY:
            spans += [(w.start, w.end) for w in words if w.end > w.start]
    return spans


def _stretches(spans: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """``spans`` grouped into stretches: a pause under JOIN_PAUSE_S does not end one."""
    out: list[list[tuple[float, float]]] = []
    for span in spans:
        if out and span[0] - out[-1][-1][1] < JOIN_PAUSE_S:
            out[-1].append(span)
        else:
            out.append([span])
    return out


def print_unvoiced_stretches(samples: np.ndarray, talking: np.ndarray, heard: np.ndarray, prints: VoicePrints,
                             voice_of: np.ndarray, encoder) -> np.ndarray:
    """``talking`` with each long stretch heard but unspoken-for given to the voice its print matches, if any."""
    import torch

    n_voices = talking.shape[1]
    quiet = heard & ~talking.any(1)
    if not n_voices or not len(prints) or not quiet.any():
        return talking
    centroids = voice_centroids(prints.vectors, voice_of, n_voices)
    starts = frame_start(np.arange(len(quiet)))
    out = talking.copy()
    for stretch in _stretches(frame_spans(quiet, samples.size / SAMPLE_RATE)):
        if sum(e - s for s, e in stretch) < MIN_PRINT_S:
            continue
        audio = np.concatenate([samples[int(s * SAMPLE_RATE):int(e * SAMPLE_RATE)] for s, e in stretch])
        rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
        if rms <= 0:
            continue
        with torch.inference_mode():
            vector = embed(encoder, features.fbank(audio * np.float32(PRINT_RMS / rms)))
        rows = quiet & (starts >= stretch[0][0]) & (starts < stretch[-1][1])
        similarity = centroids @ vector
        if similarity.max() >= MIN_PRINT_SIMILARITY:
            out[rows, int(np.argmax(similarity))] = True
    return out
