"""``DictationEngine``: capture → ring → (mono, 16 kHz) → VAD → utterance buffer → passes →
LocalAgreement-2 → events.

All work happens in the thread that calls ``run`` (the consumer); the source's callback or
thread only fills the ring.  Memory is bounded by the ring, the utterance buffer (``max_buffer_s``)
and the prompt; the session audio goes to ``options.record_path`` on disk, not into memory.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable

import numpy as np

from ..audio.capture import AudioSource
from ..audio.vad import WINDOW, StreamingVad
from ..core.errors import DeviceError, FerrumError, wrap_unexpected
from .context import RecentSpeech
from .events import (
    Committed,
    DictationOptions,
    DictationSummary,
    Event,
    Level,
    Overrun,
    Tentative,
    UtteranceEnd,
    session_transcript,
)
from .policy import LocalAgreement, Word
from .transcriber import PassTranscriber

RATE = 16000


class _Buffer:
    """The current utterance's 16 kHz audio in preallocated storage; ``start`` is its stream time."""

    def __init__(self, seconds: float):
        self.data = np.zeros(int(seconds * RATE), np.float32)
        self.size = 0
        self.start = 0  # stream sample index of data[0]

    @property
    def seconds(self) -> float:
        return self.size / RATE

    def reset(self, start: int, samples: np.ndarray | None = None) -> None:
        self.start, self.size = start, 0
        if samples is not None:
            self.append(samples)

    def append(self, samples: np.ndarray) -> None:
        n = min(len(samples), len(self.data) - self.size)  # the engine trims long before this
        self.data[self.size:self.size + n] = samples[:n]
        self.size += n

    def drop(self, n: int) -> None:
        n = min(max(n, 0), self.size)
        self.data[:self.size - n] = self.data[n:self.size]
        self.size -= n
        self.start += n

    def until(self, stream_sample: int) -> np.ndarray:
        return self.data[:max(0, min(self.size, stream_sample - self.start))]


class DictationEngine:
    def __init__(self, executor, options: DictationOptions | None = None,
                 on_event: Callable[[Event], None] | None = None):
        self.options = (options or DictationOptions()).validate()
        self.on_event = on_event
        self.transcriber = PassTranscriber(executor, self.options.language, self.options.short_context,
                                           self.options.min_context_s, self.options.tokens_per_second,
                                           self.options.context_pad_s, self.options.final_window_s,
                                           task=self.options.task)
        self._stop = threading.Event()
        self.summary = DictationSummary(record_path=self.options.record_path)
        self.committed: list[str] = []  # every committed piece, in order (kept on errors)
        self.utterances: list[tuple[float, float, str]] = []  # (start, end, text) of each finished one
        self.languages: collections.Counter[str] = collections.Counter()  # utterances per language heard

    # -- public ------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return " ".join(self.committed)

    @property
    def language(self) -> str:
        """The language given, else the one most utterances were heard in."""
        heard = self.languages.most_common(1)
        return self.transcriber.options.language or (heard[0][0] if heard else "en")

    def transcript(self):
        """The session as a ``Transcript`` (one segment per utterance) for the history."""
        return session_transcript(self.utterances, self.summary.audio_seconds, self.language,
                                  getattr(self.transcriber.ex, "model_id", ""))

    def stop(self) -> None:
        """Ask ``run`` to finish: the open utterance gets its final pass, then ``run`` returns."""
        self._stop.set()

    def run(self, source: AudioSource) -> DictationSummary:
        """Dictate from ``source`` until it ends or ``stop()``; blocking.  On a device failure the
        text committed so far and the recording are kept, then the ``FerrumError`` is raised."""
        o = self.options
        self._setup(source)
        ring = source.ring_for(o.ring_seconds)
        t0 = time.monotonic()
        failure: FerrumError | None = None
        try:
            source.start(ring)
            while not self._stop.is_set():
                ring.wait(0.05)
                frames, marks = ring.get()
                dropped = ring.take_dropped()
                if dropped:
                    self.summary.dropped_seconds += dropped / source.sample_rate
                    self._emit(Overrun(dropped / source.sample_rate))
                if len(frames):
                    self._consume(frames, marks, ring, source)
                elif source.error is not None or ring.closed:
                    break
                elif source.live and time.monotonic() - source.last_frame_wall > o.stall_s:
                    raise DeviceError(f"The audio input '{source.name}' delivered nothing for {o.stall_s:.0f} s",
                                      "the device may have been unplugged; reconnect it and start again")
            failure = source.error
        except FerrumError as exc:
            failure = exc
        except Exception as exc:  # noqa: BLE001
            failure = wrap_unexpected(exc, "dictating")
        finally:
            source.stop()
            try:
                self._finish()
            except Exception as exc:  # noqa: BLE001 - the first failure is the one to report
                failure = failure or wrap_unexpected(exc, "finishing the dictation")
            finally:
                if self._record is not None:
                    self._record.close()
                self.summary.wall_seconds = time.monotonic() - t0
        if failure is not None:
            raise failure
        return self.summary

    # -- consumer ------------------------------------------------------------------------------
    def _setup(self, source: AudioSource) -> None:
        import soxr

        o = self.options
        self._resampler = (soxr.ResampleStream(source.sample_rate, RATE, 1, dtype="float32")
                           if source.sample_rate != RATE else None)
        self._source_rate = source.sample_rate
        self._paced = source.live or getattr(source, "speed", 0) > 0
        self._vad = StreamingVad(o.vad_threshold, o.end_silence_ms, o.min_speech_ms, speech_pad_ms=30)
        self._pending = np.zeros(0, np.float32)
        self._t = 0                               # 16 kHz samples scored by the VAD
        self._committed_end = 0                   # stream sample where the last final pass's audio ended
        self._preroll = collections.deque(maxlen=max(1, int(o.preroll_s * RATE / WINDOW) + 2))
        self._buf = _Buffer(o.max_buffer_s + 2.0)
        self._recent = RecentSpeech(o.context_s, o.max_buffer_s + o.context_s + 4.0)
        self._agree = LocalAgreement(o.commit_hold_s, o.min_commit_buffer_s)
        self._arrivals: collections.deque[tuple[float, float]] = collections.deque(maxlen=4096)
        self._level_acc, self._level_n = 0.0, 0
        self._in_utt = False
        self._reset_utterance()
        self._prompt_words: collections.deque[str] = collections.deque(maxlen=120)
        self._record = None
        if o.record_path is not None:
            import soundfile as sf

            self._record = sf.SoundFile(str(o.record_path), "w", RATE, 1)

    def _reset_utterance(self) -> None:
        self._silence_start: int | None = None
        self._final_heard: int | None = None  # the pause whose final pass has run
        self._spoke = False            # speech (min_speech_ms or more) since the last full commit
        self._speech_run = 0
        self._last_pass = 0            # buffer size at the last step pass
        self._utt_words: list[str] = []
        self._utt_start: float | None = None
        self._utt_end = 0.0
        self._final_wall = 0.0
        self.transcriber.new_utterance()

    def _consume(self, frames: np.ndarray, marks, ring, source) -> None:
        mono = frames[:, 0] if frames.shape[1] == 1 else frames.mean(axis=1)
        if self._resampler is not None:
            mono = self._resampler.resample_chunk(mono)
        for written, wall in marks:
            self._arrivals.append((written / self._source_rate, wall))
        self.summary.audio_seconds += len(frames) / self._source_rate
        if self._record is not None:
            self._record.write(mono)
        self._level(mono)
        buf = np.concatenate([self._pending, mono]) if self._pending.size else mono
        full = len(buf) // WINDOW * WINDOW
        self._pending = buf[full:].copy()
        for i in range(0, full, WINDOW):
            # paced sources: skip re-transcription while behind, so passes never pile up
            self._behind = self._paced and ring.available / self._source_rate > self.options.step_s
            self._window(buf[i:i + WINDOW])

    def _level(self, mono: np.ndarray) -> None:
        self._level_acc += float(np.dot(mono, mono))
        self._level_n += len(mono)
        if self._level_n >= self.options.level_interval_s * RATE:
            self._emit(Level(float(np.sqrt(self._level_acc / self._level_n))))
            self._level_acc, self._level_n = 0.0, 0

    def _window(self, win: np.ndarray) -> None:
        o, vad = self.options, self._vad
        start = self._t
        events = vad.push(win)
        self._t += WINDOW
        self._recent.push(win)
        self._preroll.append((start, win))
        prob = vad.last_probability
        opened = False
        for ev in events:
            if ev.kind == "speech_start" and not self._in_utt:
                self._in_utt, opened = True, True
                self._reset_utterance()
                # the preroll never reaches back into audio whose text is already committed
                begin = max(int(ev.time * RATE) - int(o.preroll_s * RATE), self._committed_end)
                kept = [(s, w) for s, w in self._preroll if s + WINDOW > begin]
                if kept and kept[0][0] < begin:
                    kept[0] = (begin, kept[0][1][begin - kept[0][0]:])
                self._buf.reset(kept[0][0] if kept else start)
                for _, w in kept:
                    self._buf.append(w)
            elif ev.kind == "speech_end" and self._in_utt:
                self._end_utterance()
        if not self._in_utt:
            return
        if not opened:
            self._buf.append(win)
        if prob >= vad.threshold:
            self._silence_start = None
            self._speech_run += 1
            self._spoke = self._spoke or self._speech_run * WINDOW >= o.min_speech_ms * RATE // 1000
        elif prob < vad.neg_threshold and self._silence_start is None:
            self._silence_start, self._speech_run = start, 0
        silent = self._t - self._silence_start if self._silence_start is not None else -1
        if self._spoke and silent >= o.pause_commit_ms * RATE // 1000:
            self._commit_all(self._silence_start)
        elif self._spoke and silent >= o.final_pass_ms * RATE // 1000 and self._final_heard != self._silence_start:
            # the final pass runs now, while the pause is confirmed; the commit finds its words cached
            self._final_heard = self._silence_start
            self._final_words(self._silence_start)
        elif (self._spoke and not self._behind and self._silence_start is None
              and self._buf.size - self._last_pass >= o.step_s * RATE):
            self._step()
        if self._buf.seconds >= o.max_buffer_s + 1.0:  # a pass could not trim (no words): keep bounded
            self._buf.drop(int(RATE * (self._buf.seconds - o.max_buffer_s)))
            self._agree.reset()

    # -- passes ----------------------------------------------------------------------------------
    def _step(self) -> None:
        o = self.options
        self._last_pass = self._buf.size
        audio = self._buf.until(self._t)
        words = self.transcriber.words(audio, context=self._context())
        self._note_buffer()
        if words is None:
            return
        new, tentative = self._agree.update(words, len(audio) / RATE)
        self._commit(new)
        self._emit(Tentative(" ".join(w.text for w in tentative)))
        if self._buf.seconds > o.trim_after_s:
            n = self._agree.trim_point(words, o.trim_after_s / 2, force=self._buf.seconds > o.max_buffer_s)
            if n:
                cut = int(words[n - 1].end * RATE)
                self._recent.commit(self._buf.start, self._buf.start + cut, " ".join(w.text for w in words[:n]))
                self._prompt_words.extend(w.text for w in words[:n])
                self.transcriber.set_prompt(" ".join(self._prompt_words))
                self._buf.drop(cut)
                self._last_pass = self._buf.size
                self._agree.trim(n, cut / RATE)

    def _final_cut(self, speech_end: int) -> int:
        # the VAD ends speech early on soft endings ("clubs" heard as "close"): the pass hears the pause too
        return min(speech_end + self.options.final_pass_ms * RATE // 1000, self._t)

    def _final_words(self, speech_end: int) -> list[Word]:
        """The final pass over the utterance up to ``speech_end`` (and a little of the pause after it).
        The same audio under the same prompt is decoded once, so the commit may ask again for free."""
        words = self.transcriber.words(self._buf.until(self._final_cut(speech_end)), final=True,
                                       context=self._context())
        self._note_buffer()
        return words

    def _commit_all(self, speech_end: int) -> None:
        """A pause or the utterance end: one final pass over the speech, everything committed."""
        cut = self._final_cut(speech_end)
        context = self._context()
        words = self._final_words(speech_end)
        new = self._agree.flush(words)
        if context is None and self._agree.committed == len(new) and self._echoes_prompt(new):
            new = []  # a pass over a breath or a click that just repeats the prompt
        self._commit(new)
        self._recent.commit(self._buf.start, cut, " ".join(w.text for w in words))
        self._emit(Tentative(""))
        self._prompt_words.extend(w.text for w in words)
        self.transcriber.set_prompt(" ".join(self._prompt_words))
        self._buf.drop(cut - self._buf.start)  # later passes hear it as context
        self._committed_end = cut
        self._agree.reset()
        self._spoke, self._last_pass = False, self._buf.size
        self._final_wall = time.monotonic()
        self._speech_end = speech_end / RATE

    def _context(self):
        return self._recent.before(self._buf.start) if self.options.context_s > 0 else None

    def _echoes_prompt(self, words: list[Word]) -> bool:
        """Whisper, given little speech, tends to repeat the prompt's last sentence."""
        keys = [w.key for w in words]
        recent = [Word(t, 0, 0).key for t in list(self._prompt_words)[-len(keys):]] if keys else []
        return bool(keys) and keys == recent

    def _end_utterance(self) -> None:
        if self._spoke:
            self._commit_all(self._silence_start if self._silence_start is not None else self._t)
        if self._utt_words:
            latency = max(0.0, self._final_wall - self._arrival(self._speech_end))
            self.summary.utterances += 1
            self.summary.latencies.append(latency)
            self.utterances.append((self._utt_start or 0.0, self._utt_end, " ".join(self._utt_words)))
            self.languages[self.transcriber.language or "en"] += 1
            self._emit(UtteranceEnd(latency, " ".join(self._utt_words), self._utt_start or 0.0, self._utt_end))
        self._in_utt = False
        self._reset_utterance()
        if not self.options.prompt_previous:
            self._prompt_words.clear()
            self.transcriber.set_prompt("")
        self._buf.reset(self._t)
        self._agree.reset()

    def _finish(self) -> None:
        """End of stream or stop: the open utterance is finalised with what was heard."""
        if getattr(self, "_vad", None) is None:
            return
        try:
            if self._in_utt:
                self._end_utterance()
        finally:
            self.summary.text = self.text
            self.summary.passes = self.transcriber.passes
            self.summary.compute_seconds = self.transcriber.compute_seconds

    def _commit(self, words: list[Word]) -> None:
        if not words:
            return
        base = self._buf.start / RATE
        text = " ".join(w.text for w in words)
        start, end = base + words[0].start, base + words[-1].end
        lag = max(0.0, self._t / RATE - end)
        self.committed.append(text)
        self._utt_words.append(text)
        self._utt_start = start if self._utt_start is None else self._utt_start
        self._utt_end = end
        self.summary.lags.append(lag)
        self._emit(Committed(text, start, end, lag))

    def _note_buffer(self) -> None:
        self.summary.max_buffer_seconds = max(self.summary.max_buffer_seconds, self._buf.seconds)

    def _arrival(self, stream_seconds: float) -> float:
        """Wall clock at which the audio at ``stream_seconds`` was captured."""
        for seconds, wall in self._arrivals:
            if seconds >= stream_seconds:
                return wall
        return time.monotonic()

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)
