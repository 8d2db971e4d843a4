"""Batched long-form transcription: several 30 s windows (of one file or of many) decoded together.

Sequential long-form decoding must wait for each window's last timestamp before it knows where
the next window starts. Here the windows are fixed up front instead, as faster-whisper's
BatchedInferencePipeline does, so ``batch_windows`` of them go through the encoder in one pass
and through the decoder in one forward per step:

- without VAD, a window ends in the longest pause of its last 8 seconds (so a boundary rarely
  cuts a word, and mostly falls between sentences);
- with ``options.vad_filter``, silero-vad speech spans are packed into windows of at most 30 s.

Windows are decoded without the previous window's text as prompt (they run in parallel); the
initial prompt, if any, is given to every window. Rows that fail the quality checks are retried
one by one with the usual temperature fallback. Text the model leaves out at a window's end (a
sentence that runs past it) is decoded again from its start as a short extra window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import torch

from ..core.errors import Cancelled
from ..core.types import CancelToken, Progress
from ..transcripts.results import Segment, Transcript
from .decoding import DecodeResult, is_silence, needs_fallback
from .longform import Longform, SegmentDraft, split_window
from .options import TranscribeOptions

if TYPE_CHECKING:
    from .executor import WhisperModelExecutor

PAUSE_SEARCH_SECONDS = 8.0
FRAME_SECONDS = 0.02
MIN_LEFTOVER_SECONDS = 1.0


@dataclass
class Window:
    job: int          # index of the audio it belongs to
    start: int        # first sample
    end: int          # one past the last sample


def fixed_windows(audio: np.ndarray, window: int, sample_rate: int,
                  search_s: float = PAUSE_SEARCH_SECONDS) -> list[tuple[int, int]]:
    """Cut ``audio`` into windows of at most ``window`` samples. Each ends in the middle of the
    longest pause of its last ``search_s`` seconds (a sentence end, more often than not), or at the
    quietest 0.1 s if there is no pause."""
    frame = int(FRAME_SECONDS * sample_rate)
    search = int(search_s * sample_rate) // frame * frame
    cuts, start, n = [], 0, len(audio)
    while start < n:
        end = start + window
        if end >= n:
            cuts.append((start, n))
            break
        rms = np.sqrt(np.square(audio[end - search:end].reshape(-1, frame)).mean(axis=1))
        cut = end - search + _pause_centre(rms) * frame + frame // 2
        cuts.append((start, cut))
        start = cut
    return cuts


def _pause_centre(rms: np.ndarray) -> int:
    """Index of the middle of the longest run of quiet frames (quiet: under a tenth of the median
    loudness), else of the quietest 0.1 s."""
    quiet = rms < max(0.1 * float(np.median(rms)), 1e-4)
    best_len, best_mid, run = 0, -1, 0
    for i, q in enumerate(quiet):
        run = run + 1 if q else 0
        if run > best_len:
            best_len, best_mid = run, i - run // 2
    if best_len >= 3:
        return best_mid
    smooth = np.convolve(rms, np.ones(5) / 5, mode="same")
    return int(np.argmin(smooth))


def vad_windows(audio: np.ndarray, window: int, sample_rate: int) -> list[tuple[int, int]]:
    """Speech spans packed greedily into windows of at most ``window`` samples (long spans split)."""
    from ..audio.vad import speech_spans

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


@dataclass
class _Decoded:
    window: Window
    result: DecodeResult
    enc: torch.Tensor      # [1, T, d]
    frames: int
    drafts: list[SegmentDraft]
    leftover: int          # first sample the window's text did not cover (== window.end if none)


def _decode_windows(ex, jobs: list["_Job"], batch: list[Window], options: TranscribeOptions, prompts_for,
                    cancel: CancelToken | None, final: bool) -> list[_Decoded]:
    st, mel = ex.tokens, ex.log_mel
    sr, hop = mel.sample_rate, mel.hop
    stride = ex.runtime.n_frames // ex.runtime.n_audio_ctx
    feats = [mel.window(jobs[w.job].audio[w.start:w.end]) for w in batch]
    with ex.stats.operation("prefill", len(batch)):
        enc, _ = ex.runtime.encode_cached([f for f, _ in feats])
    for i, w in enumerate(batch):
        if not jobs[w.job].transcript.language:
            jobs[w.job].emitter._detect(enc[i:i + 1])
    results = _decode_rows(ex, enc, prompts_for(batch), options, cancel)
    out = []
    for i, (w, (_, frames), result) in enumerate(zip(batch, feats, results)):
        offset = w.start / sr
        drafts, leftover = [], w.end
        if frames > 0 and not is_silence(result, options):
            drafts, advance = split_window(result.tokens, st, offset, frames, stride)
            leftover = min(w.end, w.start + advance * hop)
            if final or (w.end - leftover) < MIN_LEFTOVER_SECONDS * sr:
                drafts = finish_drafts(drafts, result.tokens, st, offset, (w.end - w.start) / sr)
                leftover = w.end
        out.append(_Decoded(w, result, enc[i:i + 1], frames, drafts, leftover))
    return out


def _run(ex: "WhisperModelExecutor", jobs: list[_Job], options: TranscribeOptions,
         cancel: CancelToken | None) -> None:
    """Decode the planned windows batch by batch. Whisper stops before a sentence that runs past
    the window's end (sequential decoding would seek back to it); such uncovered tails are decoded
    again as short windows of their own, batched together, before the batch's segments are emitted."""
    st, sr = ex.tokens, ex.log_mel.sample_rate
    windows = plan_windows([j.audio for j in jobs], options, ex.log_mel.n_samples, sr)
    initial = options.initial_prompt
    previous = ex.encode_text(" " + initial.strip()) if initial and initial.strip() else []
    timestamps = not options.extra.get("without_timestamps", False)

    def prompts_for(batch: list[Window]) -> list[list[int]]:
        return [st.prompt(previous, jobs[w.job].emitter._language(), options.task, timestamps=timestamps)
                for w in batch]

    size = options.batch_windows
    for first in range(0, len(windows), size):
        ex.turns.yield_turn()  # between two batches: a waiting dictation pass goes first
        if cancel is not None:
            cancel.raise_if_cancelled("transcription")
        decoded = _decode_windows(ex, jobs, windows[first:first + size], options, prompts_for, cancel, final=False)
        tails = [Window(d.window.job, d.leftover, d.window.end) for d in decoded if d.leftover < d.window.end]
        for part in range(0, len(tails), size):
            decoded += _decode_windows(ex, jobs, tails[part:part + size], options, prompts_for, cancel, final=True)
        for d in sorted(decoded, key=lambda d: (d.window.job, d.window.start)):
            lf = jobs[d.window.job].emitter
            if d.drafts:
                lf._emit(d.drafts, d.result, d.enc)
            lf._progress(d.window.end / sr)
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
