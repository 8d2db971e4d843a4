"""Batched transcription: several 30 s windows (of one file or of many) decoded together.

Sequential long-form decoding must wait for each window's last timestamp before it knows where
the next window starts. Here a file is first cut into independent spans of at most 30 s, as
faster-whisper's BatchedInferencePipeline does, and each span is then transcribed exactly as the
sequential loop would (``Longform.take``: seek to the last timestamp, the span's earlier text as
prompt, the same temperature ladder) by a ``_Cursor``.  The cursors advance in lockstep: every
round encodes the next window of up to ``batch_windows`` of them and decodes those windows greedily
in one forward per step; a window that fails the quality checks goes down the temperature ladder
on its own.  The int8 layers and attention are computed per row, so a window's text does not
depend on what it was batched with: a file shorter than 30 s gets the sequential text.

- without VAD, a span ends in the longest pause of its last 8 seconds (so a boundary rarely cuts
  a word, and mostly falls between sentences);
- with ``options.vad_filter``, silero-vad speech spans are packed into spans of at most 30 s;
- with ``options.split_files`` off, a file is not cut at all: its one cursor decodes it as the
  sequential loop would, and only the windows of different files share batches (the same text as
  transcribing the files one after another, in less time when many are short).

Spans do not see the text of the span before them (they run in parallel); the initial prompt,
if any, is given to every span.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..core.errors import Cancelled
from ..core.types import CancelToken, Progress
from ..transcripts.results import Segment, Transcript
from .longform import Longform
from .options import TranscribeOptions
from .speech_evidence import WindowAudio

if TYPE_CHECKING:
    from .executor import WhisperModelExecutor

PAUSE_SEARCH_SECONDS = 8.0
FRAME_SECONDS = 0.02


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


def whole_file(audio: np.ndarray, window: int, sample_rate: int) -> list[tuple[int, int]]:
    """One span for the whole of ``audio``: its cursor then decodes it window by window as the
    sequential loop does (``options.split_files`` off)."""
    return [(0, len(audio))]


def plan_windows(audios: Sequence[np.ndarray], options: TranscribeOptions, window: int,
                 sample_rate: int) -> list[Window]:
    planner = vad_windows if options.vad_filter else fixed_windows if options.split_files else whole_file
    return [Window(job, a, b) for job, audio in enumerate(audios) for a, b in planner(audio, window, sample_rate)]


class _Job:
    """One audio and its transcript (segments, words, callbacks), filled span by span in order."""

    def __init__(self, ex, options, audio, on_segment=None, on_progress=None, cancel=None):
        self.audio = audio
        self.emitter = Longform(ex, options, len(audio) / ex.log_mel.sample_rate, on_segment, on_progress, cancel)

    @property
    def transcript(self) -> Transcript:
        return self.emitter.transcript


class _Cursor:
    """One span of a job, transcribed as the sequential loop would, one window per round."""

    def __init__(self, ex, options, job: _Job, span: Window):
        self.job, self.span = job, span
        self.seek = 0                                   # frames from the span's start
        self.longform = Longform(ex, options, job.transcript.duration)
        self.done = False

    def samples(self, ex) -> np.ndarray:
        begin = self.span.start + self.seek * ex.log_mel.hop
        return self.job.audio[begin:min(self.span.end, begin + ex.log_mel.n_samples)]

    def take(self, ex, result, enc, frames: int, audio: WindowAudio | None = None) -> None:
        mel = ex.log_mel
        offset = (self.span.start + self.seek * mel.hop) / mel.sample_rate
        self.seek += self.longform.take(result, enc, offset, frames, audio) if result is not None else frames
        self.done = self.span.start + self.seek * mel.hop >= self.span.end


def _decode_round(ex, cursors: list[_Cursor], options: TranscribeOptions, cancel: CancelToken | None) -> None:
    """Encode the next window of every cursor, decode them together, advance each cursor."""
    heard = [WindowAudio(c.samples(ex)) for c in cursors]
    windows = [ex.log_mel.window(a.samples) for a in heard]
    live = []
    for c, audio, (mel, frames) in zip(cursors, heard, windows):
        if frames <= 0:
            c.done = True
        elif audio.is_digital_silence():
            c.take(ex, None, None, frames)   # nothing to hear: not even encoded
        else:
            live.append((c, mel, frames, audio))
    if not live:
        return
    with ex.stats.operation("prefill", len(live)):
        enc, keys = ex.runtime.encode_cached([mel for _, mel, _, _ in live])
    for i, (c, _, _, _) in enumerate(live):
        job = c.job.emitter
        if not job.transcript.language:
            job._detect(enc[i:i + 1])
        c.longform.transcript.language = job.transcript.language
    prompts = [c.longform.prompt() for c, _, _, _ in live]
    audios = [audio for _, _, _, audio in live]
    firsts: list = [None] * len(live)
    if options.beam_size == 1 and options.temperatures[0] == 0:
        timestamps = not options.extra.get("without_timestamps", False)
        firsts = ex.decoder.decode_batch(enc, prompts, 0.0, timestamps=timestamps, cancel=cancel,
                                         stop_loops=options.repetition_threshold, audio=audios)
    for i, (c, _, frames, audio) in enumerate(live):
        result = ex.decode_window(enc[i:i + 1], prompts[i], options, cancel, first=firsts[i], seed_from=keys[i],
                                  audio=audio)
        c.take(ex, c.longform.unless_skipped(result, enc[i:i + 1], keys[i], audio), enc[i:i + 1], frames, audio)


def _run(ex: "WhisperModelExecutor", jobs: list[_Job], options: TranscribeOptions,
         cancel: CancelToken | None, on_done: Callable[[int, Transcript], None] | None = None) -> None:
    """Transcribe every job's spans, ``batch_windows`` windows per round; each job receives its
    spans' segments in order as soon as the spans before them are finished."""
    sr = ex.log_mel.sample_rate
    spans = plan_windows([j.audio for j in jobs], options, ex.log_mel.n_samples, sr)
    cursors = [_Cursor(ex, options, jobs[w.job], w) for w in spans]
    handed, finished = 0, 0                             # cursors handed to their job; jobs finished

    def finish_jobs(upto: int) -> int:
        for j in range(finished, upto):
            jobs[j].emitter._progress(jobs[j].transcript.duration)
            if on_done is not None:
                on_done(j, jobs[j].transcript)
        return max(finished, upto)

    while handed < len(cursors):
        ex.turns.yield_turn()  # between two batches: a waiting dictation pass goes first
        if cancel is not None:
            cancel.raise_if_cancelled("transcription")
        active = [c for c in cursors[handed:] if not c.done][:options.batch_windows]
        if active:
            _decode_round(ex, active, options, cancel)
        while handed < len(cursors) and cursors[handed].done:
            c = cursors[handed]
            c.job.emitter.adopt(c.longform.transcript.segments)
            c.job.emitter._progress(c.span.end / sr)
            handed += 1
        finished = finish_jobs(cursors[handed].span.job if handed < len(cursors) else len(jobs))
    finish_jobs(len(jobs))


def load_samples(ex, audio) -> np.ndarray:
    """The whole of ``audio`` (path, bytes or array) as 16 kHz float32 samples."""
    _, chunks = ex._open_audio(audio)
    parts = [np.asarray(c, dtype=np.float32).reshape(-1) for c in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def transcribe_batched(ex: "WhisperModelExecutor", audio, options: TranscribeOptions, *,
                       on_segment: Callable[[Segment], None] | None = None,
                       on_progress: Callable[[Progress], None] | None = None,
                       cancel: CancelToken | None = None) -> Transcript:
    """The executor's ``transcribe`` when ``options.batch_windows > 1`` (options already checked)."""
    job = _Job(ex, options, load_samples(ex, audio), on_segment, on_progress, cancel)
    job.emitter._progress(0.0)
    try:
        _run(ex, [job], options, cancel)
    except Cancelled as exc:
        exc.partial = job.transcript
        raise
    return job.transcript


def transcribe_many(ex: "WhisperModelExecutor", audios: Sequence, options: TranscribeOptions | None = None,
                    cancel: CancelToken | None = None, *,
                    on_done: Callable[[int, Transcript], None] | None = None,
                    on_progress: Callable[[int, Progress], None] | None = None,
                    on_segment: Callable[[int, Segment], None] | None = None) -> list[Transcript]:
    """Transcribe several inputs with their windows packed into shared batches (many short clips
    fill a batch together); one Transcript per input, in order.  Inputs finish in order:
    ``on_segment(i, segment)`` and ``on_progress(i, Progress)`` report input i's segments and seconds
    done as its spans finish, then ``on_done(i, transcript)`` is called as soon as it is complete."""
    options = ex.check_options(options)
    if options.batch_windows < 2:
        options = replace(options, batch_windows=8)
    with ex._lock:
        ex._require_ready()
        if options.chunked:
            from .chunked import transcribe_chunked

            return transcribe_chunked(ex, audios, options, cancel, on_done=on_done, on_progress=on_progress,
                                      on_segment=on_segment)
        jobs = [_Job(ex, options, load_samples(ex, a),
                     on_segment=None if on_segment is None else (lambda seg, i=i: on_segment(i, seg)),
                     on_progress=None if on_progress is None else (lambda p, i=i: on_progress(i, p)))
                for i, a in enumerate(audios)]
        _run(ex, jobs, options, cancel, on_done)
    return [j.transcript for j in jobs]
