"""Batched long-form transcription: several 30 s windows (of one file or of many) decoded together.

Sequential long-form decoding must wait for each window's last timestamp before it knows where
the next window starts. Here the windows are fixed up front instead, as faster-whisper's
BatchedInferencePipeline does, so ``batch_windows`` of them go through the encoder in one pass
and through the decoder in one forward per step:

- without VAD, a window ends at the quietest 0.1 s within its last few seconds (so a boundary
  rarely cuts a word), else at 30 s;
- with ``options.vad_filter``, silero-vad speech spans are packed into windows of at most 30 s.

Windows are decoded without the previous window's text as prompt (they run in parallel); the
initial prompt, if any, is given to every window. Rows that fail the quality checks are retried
one by one with the usual temperature fallback.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import torch

from ..errors import Cancelled
from ..types import CancelToken, Progress
from .decoding import DecodeResult, is_silence, needs_fallback
from .longform import Longform, SegmentDraft, split_window
from .options import TranscribeOptions
from .results import Segment, Transcript

if TYPE_CHECKING:
    from .executor import WhisperModelExecutor

QUIET_SEARCH_SECONDS = 5.0
QUIET_FRAME_SECONDS = 0.1


@dataclass
class Window:
    job: int          # index of the audio it belongs to
    start: int        # first sample
    end: int          # one past the last sample


def fixed_windows(audio: np.ndarray, window: int, sample_rate: int,
                  search_s: float = QUIET_SEARCH_SECONDS) -> list[tuple[int, int]]:
    """Cut ``audio`` into windows of at most ``window`` samples, each ending at the quietest
    ``QUIET_FRAME_SECONDS`` frame of its last ``search_s`` seconds."""
    frame = int(QUIET_FRAME_SECONDS * sample_rate)
    search = int(search_s * sample_rate) // frame * frame
    cuts, start, n = [], 0, len(audio)
    while start < n:
        end = start + window
        if end >= n:
            cuts.append((start, n))
            break
        tail = audio[end - search:end].reshape(-1, frame)
        quietest = int(np.argmin(np.square(tail).mean(axis=1)))
        cut = end - search + quietest * frame + frame // 2
        cuts.append((start, cut))
        start = cut
    return cuts


def vad_windows(audio: np.ndarray, window: int, sample_rate: int) -> list[tuple[int, int]]:
    """Speech spans packed greedily into windows of at most ``window`` samples (long spans split)."""
    from ..vad import speech_spans

    spans = [(int(a * sample_rate), int(b * sample_rate)) for a, b in speech_spans(audio)]
    out: list[tuple[int, int]] = []
    for a, b in spans:
        while b - a > window:
            out.append((a, a + window))
            a += window
        if out and b - out[-1][0] <= window and a >= out[-1][1]:
            out[-1] = (out[-1][0], b)
        elif b > a:
            out.append((a, b))
    return out


def plan_windows(audios: Sequence[np.ndarray], options: TranscribeOptions, window: int,
                 sample_rate: int) -> list[Window]:
    planner = vad_windows if options.vad_filter else fixed_windows
    return [Window(job, a, b) for job, audio in enumerate(audios) for a, b in planner(audio, window, sample_rate)]


def finish_drafts(drafts: list[SegmentDraft], tokens: list[int], st, offset: float, seconds: float
                  ) -> list[SegmentDraft]:
    """``split_window`` leaves out text after the last complete timestamp pair (sequential decoding
    re-reads it from the next window); a fixed window has no next chance, so it becomes a segment
    that ends at the window's end."""
    used = sum(len(d.tokens) for d in drafts)
    rest = tokens[used:]
    if any(t < st.eot for t in rest):
        begin = drafts[-1].end if drafts else offset
        if rest[0] >= st.timestamp_begin:
            begin = offset + (rest[0] - st.timestamp_begin) * st.time_precision
        drafts = drafts + [SegmentDraft(begin, max(begin, offset + seconds), rest)]
    return drafts


class _Job:
    """One audio's transcript, filled by the core's ``Longform`` emitter (segments, words, callbacks)."""

    def __init__(self, ex, options, audio, on_segment=None, on_progress=None, cancel=None):
        self.audio = audio
        self.emitter = Longform(ex, options, len(audio) / ex.log_mel.sample_rate, on_segment, on_progress, cancel)

    @property
    def transcript(self) -> Transcript:
        return self.emitter.transcript


def _decode_rows(ex, enc: torch.Tensor, prompts: list[list[int]], options: TranscribeOptions,
                 cancel: CancelToken | None) -> list[DecodeResult]:
    """Greedy for all rows in one batch; rows failing the quality checks (or all rows, for beam
    search) go through the per-window decode with its temperature fallback."""
    timestamps = not options.extra.get("without_timestamps", False)
    if options.beam_size > 1 or options.temperatures[0] > 0:
        return [ex.decode_window(enc[i:i + 1], p, options, cancel) for i, p in enumerate(prompts)]
    results = ex.decoder.decode_batch(enc, prompts, options.temperatures[0], timestamps=timestamps, cancel=cancel)
    hotter = replace(options, temperatures=options.temperatures[1:])
    for i, r in enumerate(results):
        if hotter.temperatures and needs_fallback(r, options):
            retry = ex.decode_window(enc[i:i + 1], prompts[i], hotter, cancel)
            results[i] = retry
    return results


def _run(ex: "WhisperModelExecutor", jobs: list[_Job], options: TranscribeOptions,
         cancel: CancelToken | None) -> None:
    st, mel = ex.tokens, ex.log_mel
    sr = mel.sample_rate
    stride = ex.runtime.n_frames // ex.runtime.n_audio_ctx
    windows = plan_windows([j.audio for j in jobs], options, mel.n_samples, sr)
    initial = options.initial_prompt
    previous = ex.encode_text(" " + initial.strip()) if initial and initial.strip() else []
    timestamps = not options.extra.get("without_timestamps", False)
    for first in range(0, len(windows), options.batch_windows):
        if cancel is not None:
            cancel.raise_if_cancelled("transcription")
        batch = windows[first:first + options.batch_windows]
        feats = [mel.window(jobs[w.job].audio[w.start:w.end]) for w in batch]
        with ex.stats.operation("prefill", len(batch)):
            enc, _ = ex.runtime.encode_cached([f for f, _ in feats])
        for i, w in enumerate(batch):
            lf = jobs[w.job].emitter
            if not lf.transcript.language:
                lf._detect(enc[i:i + 1])
        prompts = [st.prompt(previous, jobs[w.job].emitter._language(), options.task, timestamps=timestamps)
                   for w in batch]
        results = _decode_rows(ex, enc, prompts, options, cancel)
        for i, (w, (_, frames), result) in enumerate(zip(batch, feats, results)):
            lf = jobs[w.job].emitter
            offset = w.start / sr
            if frames > 0 and not is_silence(result, options):
                drafts, _ = split_window(result.tokens, st, offset, frames, stride)
                drafts = finish_drafts(drafts, result.tokens, st, offset, (w.end - w.start) / sr)
                lf._emit(drafts, result, enc[i:i + 1])
            lf._progress(w.end / sr)
    for job in jobs:
        job.emitter._progress(job.transcript.duration)


def _load(ex, audio) -> np.ndarray:
    _, chunks = ex._open_audio(audio)
    parts = [np.asarray(c, dtype=np.float32).reshape(-1) for c in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def transcribe_batched(ex: "WhisperModelExecutor", audio, options: TranscribeOptions, *,
                       on_segment: Callable[[Segment], None] | None = None,
                       on_progress: Callable[[Progress], None] | None = None,
                       cancel: CancelToken | None = None) -> Transcript:
    """The executor's ``transcribe`` when ``options.batch_windows > 1`` (options already checked)."""
    job = _Job(ex, options, _load(ex, audio), on_segment, on_progress, cancel)
    try:
        _run(ex, [job], options, cancel)
    except Cancelled as exc:
        exc.partial = job.transcript
        raise
    return job.transcript


def transcribe_many(ex: "WhisperModelExecutor", audios: Sequence, options: TranscribeOptions | None = None,
                    cancel: CancelToken | None = None) -> list[Transcript]:
    """Transcribe several inputs with their windows packed into shared batches (many short clips
    fill a batch together); one Transcript per input, in order."""
    options = ex._check_options(options)
    if options.batch_windows < 2:
        options = replace(options, batch_windows=8)
    with ex._lock:
        ex._require_ready()
        jobs = [_Job(ex, options, _load(ex, a)) for a in audios]
        _run(ex, jobs, options, cancel)
    return [j.transcript for j in jobs]
