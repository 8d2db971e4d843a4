"""``diarize(audio, options) -> Diarization``: who spoke when, offline.

The segmentation network finds up to three local speakers in each 10 s chunk (chunks every
``step_s``); CAM++ makes a voice print of each from the frames where they talk; agglomerative
clustering of the voice prints (count given, or found by a distance threshold) says which local
speakers are the same person; each chunk's speakers then vote, frame by frame, for their voices,
and the voices with most votes are talking, as many as the segmentation hears there; nobody talks
where nothing was recorded (``audio.silence``). Speech that Silero VAD or a transcript's words (``heard``)
hear and the network does not goes to the voice its print matches when the stretch is long enough
(``heard.py``), else to the nearest speaker in time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..audio.decode import load_audio
from ..core.errors import wrap_unexpected
from ..core.types import CancelToken, Progress
from ..audio.vad import speech_spans
from .activity import chunk_activity, frame_spans
from .clustering import cluster_speakers
from .heard import print_unvoiced_stretches
from .models import SpeakerModels
from .options import Diarization, DiarizationOptions
from .segmenter import CHUNK_SAMPLES, SAMPLE_RATE
from .turns import fill_heard_speech, span_frames, speaker_turns, voice_activity
from .voiceprints import voice_prints

ProgressFn = Callable[[Progress], None]


def _staged(on_progress: ProgressFn | None, base: float, share: float) -> ProgressFn | None:
    """Map a stage's own progress onto [base, base + share] of the whole job (0..1)."""
    if on_progress is None:
        return None
    return lambda p: on_progress(Progress(base + share * p.fraction, 1.0, "", p.message))


def diarize(audio, options: DiarizationOptions | None = None, *, heard: Sequence[tuple[float, float]] = (),
            on_progress: ProgressFn | None = None, cancel: CancelToken | None = None) -> Diarization:
    """Speaker turns of ``audio`` (a path, bytes or 16 kHz float32 samples).

    ``heard``: (start, end) seconds where a transcript says someone talks (``transcript_speech``); they
    are speech next to what the VAD and the network hear, and get a speaker, never a new one.

    Progress is reported as a fraction (``Progress(done, 1.0)``); ``cancel`` raises ``Cancelled``.
    A recording without speech gives a ``Diarization`` with no turns.
    """
    options = (options or DiarizationOptions()).validate()
    samples = load_audio(audio)
    duration = samples.size / SAMPLE_RATE
    models = SpeakerModels.shared()  # fails early (and clearly) when the weights are missing
    try:
        if on_progress is not None:
            on_progress(Progress(0.0, 1.0, "", "finding speech"))
        activity = chunk_activity(samples, models.segmenter, options.step_s, cancel, _staged(on_progress, 0.0, 0.3))
        heard_frames = activity.count > 0
        heard_frames |= span_frames(speech_spans(samples, options.vad, cancel), activity.n_frames)
        heard_frames |= span_frames(heard, activity.n_frames)
        heard_frames &= ~activity.silent
        speech = frame_spans(heard_frames, duration)
        if not speech:
            return Diarization([], duration, [])
        prints = voice_prints(samples, activity, models.encoder, cancel, _staged(on_progress, 0.3, 0.65))
        if cancel is not None:
            cancel.raise_if_cancelled("speaker diarization")
        # each second of speech lies in about (chunk length / step) chunks
        coverage = min(1.0, options.step_s * SAMPLE_RATE / CHUNK_SAMPLES)
        voice_of = cluster_speakers(prints, options.count_range, options.threshold, options.min_speaker_s / coverage)
        n_voices = int(voice_of.max(initial=-1)) + 1
        talking = voice_activity(activity, prints, voice_of, n_voices)
        talking = print_unvoiced_stretches(samples, talking, heard_frames, prints, voice_of, models.encoder)
        talking = fill_heard_speech(talking, heard_frames)
        turns = speaker_turns(talking, duration, options.min_gap_s)
    except Exception as exc:  # noqa: BLE001 - Cancelled and FerrumErrors pass through unchanged
        raise wrap_unexpected(exc, "telling the speakers apart") from exc
    if on_progress is not None:
        on_progress(Progress(1.0, 1.0, "", "done"))
    return Diarization(turns, duration, speech)
