"""Sequential long-form transcription: 30 s windows, timestamp tokens and seeking.

After each window the next one starts at the last complete timestamp pair, so a sentence cut
by the window border is decoded again whole in the next window and never twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import Cancelled
from ..core.types import CancelToken, Progress
from ..transcripts.results import Segment, Transcript
from .decoding import DecodeResult, is_silence
from .encoder_cache import feature_key
from .features import AudioWindows
from .options import TranscribeOptions
from .quality import word_count
from .speech_evidence import MIN_WORDS_PER_SPEECH_SECOND, WindowAudio
from .tokens import SpecialTokens

if TYPE_CHECKING:
    from .executor import WhisperModelExecutor


@dataclass
class SegmentDraft:
    start: float
    end: float
    tokens: list[int]


def split_window(tokens: list[int], st: SpecialTokens, time_offset: float, frames: int,
                 input_stride: int) -> tuple[list[SegmentDraft], int]:
    """Cut one window's tokens at timestamp pairs; returns the segments and how many frames to seek."""
    tb, prec = st.timestamp_begin, st.time_precision
    is_ts = [t >= tb for t in tokens]
    single_ending = is_ts[-2:] == [False, True]
    pair_ends = [i + 1 for i in range(len(tokens) - 1) if is_ts[i] and is_ts[i + 1]]
    if pair_ends:
        cuts = pair_ends + ([len(tokens)] if single_ending else [])
        drafts, last = [], 0
        for cut in cuts:
            piece = tokens[last:cut]
            drafts.append(SegmentDraft(time_offset + (piece[0] - tb) * prec,
                                       time_offset + (piece[-1] - tb) * prec, piece))
            last = cut
        if single_ending:
            return drafts, frames
        advance = (tokens[last - 1] - tb) * input_stride
        return drafts, advance if advance > 0 else frames
    duration = frames * st.time_precision / input_stride
    stamps = [t for t in tokens if t >= tb]
    if stamps and stamps[-1] != tb:
        duration = (stamps[-1] - tb) * prec
    return [SegmentDraft(time_offset, time_offset + duration, tokens)], frames


# A prompted window whose text has fewer words than MIN_WORDS_PER_SPEECH_SECOND per second of the speech it
# covers, over at least SKIP_MIN_SPEECH_S, skipped speech: the text so far can lead the decoder to copy its pattern instead ("18." at
# the start of every segment, then 25 s of speech as "18. The leader has left the conference."; decoded again
# without the prompt, that file went from 11.10 % to 6.93 % WER; in seven other joined files of speech-dev
# and speech-wide no window was asked: README W3; ``extra["skip_check"] = False`` measures without it)
SKIP_MIN_SPEECH_S = 8.0


def skips_speech(result: DecodeResult, audio: WindowAudio) -> bool:
    """Whether ``result``'s text leaves out most of the speech up to its last timestamp."""
    span = result.end_time
    words = word_count(result.text)
    if span is None or span < SKIP_MIN_SPEECH_S or words >= MIN_WORDS_PER_SPEECH_SECOND * span:
        return False   # the cheap bound first: the span holds no more speech than its length
    speech = audio.speech_seconds(until=span)
    return speech >= SKIP_MIN_SPEECH_S and words < MIN_WORDS_PER_SPEECH_SECOND * speech


class Longform:
    """One transcription job over a stream of windows."""

    def __init__(self, ex: WhisperModelExecutor, options: TranscribeOptions, duration: float,
                 on_segment: Callable[[Segment], None] | None = None,
                 on_progress: Callable[[Progress], None] | None = None,
                 cancel: CancelToken | None = None, timeline=None):
        self.ex = ex
        self.timeline = timeline  # a vad.SpeechTimeline when only the speech was transcribed
        self.options = options
        self.on_segment = on_segment
        self.on_progress = on_progress
        self.cancel = cancel
        self.transcript = Transcript(language=options.language or "", language_probability=1.0 if options.language
                                     else 0.0, duration=duration, task=options.task, model_id=ex.model_id)
        prompt = options.initial_prompt
        self.all_tokens: list[int] = ex.encode_text(" " + prompt.strip()) if prompt and prompt.strip() else []
        self.prompt_from = 0

    def run(self, windows: AudioWindows) -> Transcript:
        try:
            self._loop(windows)
        except Cancelled as exc:
            exc.partial = self.transcript
            raise
        return self.transcript

    def _loop(self, windows: AudioWindows) -> None:
        ex, opts = self.ex, self.options
        mel_cfg = ex.log_mel
        seek = 0
        self._progress(0.0)
        while True:
            ex.turns.yield_turn()  # between two windows: a waiting dictation pass goes first
            if self.cancel is not None:
                self.cancel.raise_if_cancelled("transcription")
            samples = windows.window(seek)
            mel, frames = mel_cfg.window(samples)
            if frames <= 0:
                break
            audio = WindowAudio(samples)
            if audio.is_digital_silence():
                seek += frames   # nothing to hear: not even encoded
            else:
                enc = ex.encode_window(mel)
                if not self.transcript.language:
                    self._detect(enc)
                key = feature_key(mel)
                result = ex.decode_window(enc, self.prompt(), opts, self.cancel, seed_from=key, audio=audio)
                result = self.unless_skipped(result, enc, key, audio)
                seek += self.take(result, enc, seek * mel_cfg.seconds_per_frame, frames, audio)
            self._progress(seek * mel_cfg.seconds_per_frame)
            if windows.exhausted and seek * mel_cfg.hop >= windows.samples_seen:
                break
        if self.timeline is None:
            self.transcript.duration = max(self.transcript.duration, windows.samples_seen / mel_cfg.sample_rate)
        if self.on_progress is not None:
            self.on_progress(Progress(self.transcript.duration, self.transcript.duration, "s"))

    def unless_skipped(self, result: DecodeResult, enc, key: str, audio: WindowAudio) -> DecodeResult:
        """``result`` of this window (encoder output ``enc``, feature key ``key``), or, where its prompted text
        skipped its speech (``skips_speech``), the window decoded again without the text so far: kept, and the
        prompt started afresh, when it holds more words and is not silence."""
        prompted = len(self.all_tokens) > self.prompt_from
        if not (prompted and self.options.extra.get("skip_check", True) and skips_speech(result, audio)):
            return result
        self.prompt_from, kept_from = len(self.all_tokens), self.prompt_from
        fresh = self.ex.decode_window(enc, self.prompt(), self.options, self.cancel, seed_from=key, audio=audio)
        if word_count(fresh.text) > word_count(result.text) and not is_silence(fresh, self.options, audio):
            return fresh
        self.prompt_from = kept_from
        return result

    def prompt(self) -> list[int]:
        """The decoder prompt of the next window: the text so far (since the last reset), then SOT."""
        return self.ex.tokens.prompt(self.all_tokens[self.prompt_from:], self._language(), self.options.task,
                                     timestamps=not self.options.extra.get("without_timestamps", False))

    def take(self, result: DecodeResult, enc, offset: float, frames: int, audio: WindowAudio | None = None) -> int:
        """Apply one decoded window that starts at ``offset`` seconds and holds ``frames`` frames of
        audio (``audio``: its samples): emit its segments and update the prompt; returns how many frames
        to seek."""
        if is_silence(result, self.options, audio):
            return frames
        stride = self.ex.runtime.n_frames // self.ex.runtime.n_audio_ctx
        drafts, advance = split_window(result.tokens, self.ex.tokens, offset, frames, stride)
        self._emit(drafts, result, enc)
        if not self.options.condition_on_previous_text or result.temperature > 0.5:
            self.prompt_from = len(self.all_tokens)
        return advance

    def adopt(self, segments: list[Segment]) -> None:
        """Append segments decoded elsewhere (a batched window) in order, as if emitted here."""
        for seg in segments:
            seg.id = len(self.transcript.segments)
            self.transcript.segments.append(seg)
            self.all_tokens.extend(seg.tokens)
            if self.on_segment is not None:
                self.on_segment(seg)

    def _language(self) -> str | None:
        return self.transcript.language if self.ex.tokens.is_multilingual else None

    def _detect(self, enc) -> None:
        ranked = self.ex.detect_language_encoded(enc)
        self.transcript.language, self.transcript.language_probability = ranked[0]

    def _emit(self, drafts: list[SegmentDraft], result: DecodeResult, enc) -> None:
        end_of_audio = self.transcript.duration or None
        fresh = []
        for draft in drafts:
            text = self.ex.decode_text(draft.tokens)
            if draft.start == draft.end or not text.strip():
                continue  # an instantaneous or empty segment: dropped, and kept out of the prompt
            end = min(draft.end, end_of_audio) if end_of_audio else draft.end
            fresh.append(Segment(id=len(self.transcript.segments) + len(fresh), start=round(draft.start, 3),
                                 end=round(max(end, draft.start), 3), text=text, tokens=list(draft.tokens),
                                 avg_logprob=result.avg_logprob, compression_ratio=result.compression_ratio,
                                 no_speech_prob=result.no_speech_prob, temperature=result.temperature))
        if fresh and self.options.word_timestamps:
            self.ex.add_word_timestamps(fresh, enc, self.options, self._language())
        if self.timeline is not None:
            fresh = self.timeline.remap(fresh)
        self.adopt(fresh)

    def _progress(self, seconds: float) -> None:
        if self.on_progress is None:
            return
        if self.timeline is not None:
            seconds = self.timeline.to_original(seconds, is_end=True)
        total = self.transcript.duration or seconds
        self.on_progress(Progress(min(seconds, total), total, "s"))
