"""``diarize(audio, options) -> Diarization``: who spoke when, offline.

Speech regions from Silero VAD; a GE2E voice embedding every ``step_s`` over the speech; the
embeddings of each stretch of speech (up to ``unit_s``) averaged into one voice print; agglomerative
clustering of those (count given, or found by a distance threshold, tiny clusters folded away);
every window labelled by its nearest voice; short runs smoothed; turns on the recording's timeline.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..audio.decode import load_audio
from ..audio.vad import speech_spans
from ..core.errors import wrap_unexpected
from ..core.types import CancelToken, Progress
from .clustering import cluster_units, first_appearance_order, unit_ids
from .encoder import SpeakerEncoder
from .options import Diarization, DiarizationOptions
from .turns import smooth_short_runs, window_turns
from .windows import embed_speech

ProgressFn = Callable[[Progress], None]


def _staged(on_progress: ProgressFn | None, base: float, share: float) -> ProgressFn | None:
    """Map a stage's own progress onto [base, base + share] of the whole job (0..1)."""
    if on_progress is None:
        return None
    return lambda p: on_progress(Progress(base + share * p.fraction, 1.0, "", p.message))


def diarize(audio, options: DiarizationOptions | None = None, *, on_progress: ProgressFn | None = None,
            cancel: CancelToken | None = None) -> Diarization:
    """Speaker turns of ``audio`` (a path, bytes or 16 kHz float32 samples).

    Progress is reported as a fraction (``Progress(done, 1.0)``); ``cancel`` raises ``Cancelled``.
    A recording without speech gives a ``Diarization`` with no turns.
    """
    options = (options or DiarizationOptions()).validate()
    samples = load_audio(audio)
    duration = samples.size / 16000
    encoder = SpeakerEncoder.shared()  # fails early (and clearly) when the weights are missing
    try:
        if on_progress is not None:
            on_progress(Progress(0.0, 1.0, "", "finding speech"))
        spans = speech_spans(samples, options.vad, cancel)
        if not spans:
            return Diarization([], duration, [])
        windows = embed_speech(samples, spans, encoder, options.step_s, cancel, _staged(on_progress, 0.2, 0.75))
        if cancel is not None:
            cancel.raise_if_cancelled("speaker diarization")
        span_ends = np.cumsum([end - start for start, end in windows.timeline.spans])
        units = unit_ids(windows.centers, span_ends, options.unit_s)
        labels = cluster_units(windows.embeddings, units, options.count_range, options.threshold,
                               _windows(options.min_speaker_s, windows.step))
        labels = smooth_short_runs(labels, windows.embeddings, _windows(options.min_turn_s, windows.step))
        turns = window_turns(windows, first_appearance_order(labels))
    except Exception as exc:  # noqa: BLE001 - Cancelled and FerrumErrors pass through unchanged
        raise wrap_unexpected(exc, "telling the speakers apart") from exc
    if on_progress is not None:
        on_progress(Progress(1.0, 1.0, "", "done"))
    return Diarization(turns, duration, spans)


def _windows(seconds: float, step: float) -> int:
    return max(1, int(np.ceil(seconds / step - 1e-9)))
