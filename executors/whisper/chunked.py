"""Fast long files (``TranscribeOptions.chunked``): speech chunks decoded independently, in batches.

The sequential loop must finish a window before it knows where the next one starts (its last
timestamp) and what it is prompted with (the text so far).  Here, as in faster-whisper's
BatchedInferencePipeline, the audio is first cut into speech chunks by Silero VAD; consecutive chunks
are joined (their silence left out) into windows of at most 30 s, and every window is decoded on its
own: no previous-text prompt and no timestamp tokens, so all windows are ready at once and need fewer
decoder steps.  A window's one segment runs from its first chunk's start to its last chunk's end on
the original timeline; with ``word_timestamps`` its words are aligned (cross-attention) in the joined
audio and mapped back.

Where the CPU multiplies bfloat16 in hardware the windows' cross-attention K/V are bfloat16
(``WhisperRuntime.fast_cross_attention``): a decoder step of a batch reads half the bytes, and on the two
long evaluation files the WER did not move (README "Devices").

Each window still goes through the sequential path's quality rules: the temperature ladder
(``decode_window``), the loop check against its audio and the silence rule (``is_silence``).  A row's
result does not depend on the rows it is batched with (``RowInt8Linear``; sampling is seeded from the
window's features), so a file gives the same text alone or next to other files.

Without timestamp tokens Whisper sometimes ends a window at a change of voice or room, as though
the speech after it were not there.  Such a window holds far fewer words than its speech
(``stops_short``).  Its decoding is first continued over the same encoder output, its text so far
forced as the start of the transcript and no end allowed before a new word (``continued``): no
encoder pass.  A text the model cannot extend so is kept (its words were counted slowly: spelled
letters, digits).  Where a continued text still stops short, it is aligned to its audio
(cross-attention) and the chunks after its end are decoded again as a window of their own,
recursively, so the text already decoded is kept and only the speech it left out costs an encoder
pass.  Where that cannot be trusted (the text reaches into the last chunk, or the chunks it heard
hold too few words for their speech as well: alignment of a short text to long audio is loose), the
window is decoded again as two halves cut at a chunk boundary.  Either way the new segments are kept
when they hold more words.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..audio.vad import SpeechTimeline, VadOptions, speech_spans
from ..core.errors import Cancelled
from ..core.types import CancelToken, Progress
from ..transcripts.results import Segment, Transcript
from .decoding import DecodeResult, is_silence
from .options import TranscribeOptions
from .quality import needs_fallback, word_count
from .speech_evidence import WindowAudio
from .word_timing import align_tokens

if TYPE_CHECKING:
    from .executor import WhisperModelExecutor

DEFAULT_CHUNKED_BATCH = 8
# faster-whisper's batched defaults: a pause of 0.16 s ends a chunk, no chunk is longer than a window
CHUNK_VAD = VadOptions(min_silence_ms=160, speech_pad_ms=400, min_speech_ms=250, max_speech_s=30.0)
# A window of joined chunks whose text has fewer words than SHORT_WORDS_PER_SPEECH_SECOND per second of its
# speech, over at least MIN_SHORT_S seconds, stopped short.  (At 8 s a chapter heading read before a long
# sentence, "Chapter II." over 7.3 s of speech in four chunks, lost the sentence.)  Readers speak 2-3 words a
# second.  The floor is twice the sequential path's (speech_evidence.MIN_WORDS_PER_SPEECH_SECOND), whose remedy
# is an encoder pass: here the first remedy is a continuation, which costs little where the model has nothing
# to add.  At 1 a window that ended after its first sentence (27 words over 17.8 s) passed; over sixteen joined
# files 1.6, 2.0 and 2.5 took the mean WER from 8.26 % to 7.70, 7.23 and 7.06 %, at 2.5 for 7 % more time than
# 1.6 and with four dev files worse (continuations that added wrong words); 2.0 cost 2 % (README C6).
SHORT_WORDS_PER_SPEECH_SECOND = 2.0
MIN_SHORT_S = 5.0
# How far (beyond the VAD's padding) an aligned text's end may stray into a chunk it did not hear
HEARD_MARGIN_S = 0.1
# A window that would end inside speech ends at its last pause instead, when at most this much speech follows
# that pause (it opens the next window): the model leaves out a sentence cut off at a window's end ("Asterisk
# is an open source | full-featured PBX" lost its first half).  Over eight files joined from speech-dev and
# speech-wide (their order and three shuffles) WER went from 9.32 % to 7.58 % on average (better on seven),
# for 6 % more time (more windows); 4 and 6 s did worse on speech-wide, 10 and 12 s less well on speech-dev
# (README C4).
PAUSE_LOOKBACK_S = 8.0


@dataclass
class ChunkWindow:
    job: int                          # index of the audio it belongs to
    spans: list[tuple[int, int]]      # the speech chunks it joins, in samples of the original audio

    def samples(self, audio: np.ndarray) -> np.ndarray:
        return np.concatenate([audio[a:b] for a, b in self.spans])

    def lengths(self) -> np.ndarray:
        """[chunks] samples of each chunk, in order."""
        return np.array([b - a for a, b in self.spans], dtype=np.int64)

    def timeline(self, sample_rate: int) -> SpeechTimeline:
        return SpeechTimeline([(a / sample_rate, b / sample_rate) for a, b in self.spans], sample_rate)


def group_chunks(spans: list[tuple[int, int]], window: int, join: bool = True,
                 lookback: int = 0) -> list[list[tuple[int, int]]]:
    """Consecutive speech chunks (samples) joined into groups of at most ``window`` samples of speech;
    a chunk longer than that is cut.  ``join=False``: one chunk per group.  ``lookback``: a group that
    would end inside speech (its last chunk touches the next) ends at its last pause instead, where the
    chunks after that pause hold at most this many samples (``PAUSE_LOOKBACK_S``); they open the next group."""
    groups: list[list[tuple[int, int]]] = []
    used = window
    for a, b in spans:
        for start in range(a, b, window):
            piece = (start, min(b, start + window))
            length = piece[1] - piece[0]
            if join and used + length <= window:
                groups[-1].append(piece)
                used += length
                continue
            carried: list[tuple[int, int]] = []
            if join and groups and piece[0] <= groups[-1][-1][1]:
                carried = _after_last_pause(groups[-1], min(lookback, window - length))
                del groups[-1][len(groups[-1]) - len(carried):]
            groups.append([*carried, piece])
            used = sum(q - p for p, q in groups[-1])
    return groups


def _after_last_pause(group: list[tuple[int, int]], most: int) -> list[tuple[int, int]]:
    """The chunks of ``group`` after the last pause between two of them (a gap: the VAD heard more
    silence there than twice its padding), when they hold at most ``most`` samples; else none."""
    speech = 0
    for j in range(len(group) - 1, 0, -1):
        speech += group[j][1] - group[j][0]
        if speech > most:
            break
        if group[j][0] > group[j - 1][1]:
            return group[j:]
    return []


def stops_short(window: ChunkWindow, text: str, sample_rate: int,
                floor: float = SHORT_WORDS_PER_SPEECH_SECOND) -> bool:
    """Whether a window of several chunks holds far fewer words than its speech: under ``floor`` a second
    over at least ``MIN_SHORT_S`` seconds.  Speech is counted without the VAD's
    padding around each chunk, which would otherwise make lists of short commands or digits look slow."""
    pad = 2 * CHUNK_VAD.speech_pad_ms * sample_rate // 1000
    speech = float(np.maximum(window.lengths() - pad, 0).sum()) / sample_rate
    return len(window.spans) > 1 and speech >= MIN_SHORT_S and word_count(text) < floor * speech


def chunks_heard(window: ChunkWindow, last_start: float, sample_rate: int) -> int:
    """How many of ``window``'s chunks a text aligned to its joined audio heard: those up to the last one
    that starts before the text's last token does (``last_start``), given the VAD's padding and
    ``HEARD_MARGIN_S`` of slack.  Not the text's end: alignment stretches a text's last token over
    the speech it left out."""
    margin = CHUNK_VAD.speech_pad_ms / 1000 + HEARD_MARGIN_S
    lengths = window.lengths()
    starts = (np.cumsum(lengths) - lengths) / sample_rate
    return max(int(np.searchsorted(starts, last_start - margin, side="left")), 1)


def split(window: ChunkWindow) -> list[ChunkWindow]:
    """Two windows of ``window``'s chunks, cut at the chunk boundary nearest half its speech."""
    lengths = np.cumsum(window.lengths())
    cut = int(np.abs(lengths[:-1] - lengths[-1] / 2).argmin()) + 1
    return [ChunkWindow(window.job, window.spans[:cut]), ChunkWindow(window.job, window.spans[cut:])]


def _words(segments: list[Segment]) -> int:
    return sum(word_count(s.text) for s in segments)


def continued(ex: "WhisperModelExecutor", result: DecodeResult, enc, prompt: list[int], audio: WindowAudio,
              options: TranscribeOptions, timestamps: bool = False, cancel: CancelToken | None = None) -> DecodeResult:
    """``result`` (greedy, over encoder output ``enc`` of ``audio`` with ``prompt``) decoded further over the same
    encoder output: its text forced as the start of the transcript, no end before a new text token. Whisper
    goes on with the speech it had left out at the cost of a decoder step a token, not an encoder pass (over
    eight joined files, 0.92x the time of decoding the rest of such windows anew, mean WER 7.45 % against
    7.58 %: README C5).
    ``result`` itself where the continuation adds no word, is unlikely on its own (a made-up tail over noise
    the VAD took for speech), or makes the whole look wrong (``needs_fallback``)."""
    eot = ex.tokens.eot
    text = [t for t in result.tokens if t < eot]
    if not text:
        return result
    more = ex.decoder.decode_batch(enc, [prompt], 0.0, timestamps=timestamps, cancel=cancel, prefix=text,
                                   require_text=True, stop_loops=options.repetition_threshold, audio=[audio])[0]
    logprob = sum(result.token_logprobs) if result.token_logprobs is not None else result.sum_logprob
    row = text + more.tokens + ([] if more.ran_out else [eot])
    merged = ex.decoder.result(row, logprob + more.sum_logprob, result.no_speech_prob, result.temperature)
    unlikely = options.log_prob_threshold is not None and more.avg_logprob < options.log_prob_threshold
    if word_count(merged.text) <= word_count(result.text) or unlikely or needs_fallback(merged, options, audio):
        return result
    return merged


def plan(audios: Sequence[np.ndarray], window: int, sample_rate: int, join: bool = True,
         cancel: CancelToken | None = None, pause_lookback_s: float = PAUSE_LOOKBACK_S) -> list[ChunkWindow]:
    out = []
    lookback = int(pause_lookback_s * sample_rate)
    for job, audio in enumerate(audios):
        spans = [(int(a * sample_rate), int(b * sample_rate)) for a, b in speech_spans(audio, CHUNK_VAD, cancel)]
        out += [ChunkWindow(job, group) for group in group_chunks(spans, window, join, lookback)]
    return out


class _Job:
    """One audio's transcript, filled window by window in order."""

    def __init__(self, ex, options: TranscribeOptions, audio: np.ndarray,
                 on_segment: Callable[[Segment], None] | None = None,
                 on_progress: Callable[[Progress], None] | None = None):
        self.audio, self.on_segment, self.on_progress = audio, on_segment, on_progress
        duration = len(audio) / ex.log_mel.sample_rate
        self.transcript = Transcript(language=options.language or "",
                                     language_probability=1.0 if options.language else 0.0,
                                     duration=duration, task=options.task, model_id=ex.model_id)
        self.progress(0.0)

    def add(self, segments: list[Segment], done_s: float) -> None:
        for segment in segments:
            segment.id = len(self.transcript.segments)
            self.transcript.segments.append(segment)
            if self.on_segment is not None:
                self.on_segment(segment)
        self.progress(done_s)

    def progress(self, seconds: float) -> None:
        if self.on_progress is not None:
            total = self.transcript.duration
            self.on_progress(Progress(min(seconds, total), total, "s"))


class _Decoder:
    """Decodes windows ``options.batch_windows`` at a time and hands each job its segments in order."""

    def __init__(self, ex: "WhisperModelExecutor", options: TranscribeOptions, jobs: list[_Job],
                 cancel: CancelToken | None):
        self.ex, self.jobs, self.cancel = ex, jobs, cancel
        self.timestamps = bool(options.extra.get("chunk_timestamps", False))  # measured against, not for use
        self.floor = options.extra.get("chunk_short_words_per_s", SHORT_WORDS_PER_SPEECH_SECOND)  # likewise
        self.options = replace(options, condition_on_previous_text=False,
                               extra={**options.extra, "without_timestamps": not self.timestamps})
        prompt = options.initial_prompt
        self.prompt_tokens = ex.encode_text(" " + prompt.strip()) if prompt and prompt.strip() else []

    def run(self, windows: list[ChunkWindow], on_done: Callable[[int, Transcript], None] | None) -> None:
        size = max(self.options.batch_windows, 1)
        finished = 0
        for at in range(0, len(windows), size):
            self.ex.turns.yield_turn()  # between two batches: a waiting dictation pass goes first
            if self.cancel is not None:
                self.cancel.raise_if_cancelled("transcription")
            batch = windows[at:at + size]
            with self.ex.runtime.fast_cross_attention():   # no prompt: no cascade from a changed token
                decoded = self._decode(batch)
            for w, segments in zip(batch, decoded):
                self.jobs[w.job].add(segments, w.spans[-1][1] / self.ex.log_mel.sample_rate)
            upto = windows[at + size].job if at + size < len(windows) else len(self.jobs)
            finished = self._finish(finished, upto, on_done)
        self._finish(finished, len(self.jobs), on_done)

    def _finish(self, finished: int, upto: int, on_done) -> int:
        for j in range(finished, upto):
            self.jobs[j].progress(self.jobs[j].transcript.duration)
            if on_done is not None:
                on_done(j, self.jobs[j].transcript)
        return max(finished, upto)

    def _decode(self, batch: list[ChunkWindow]) -> list[list[Segment]]:
        """Each window's segments: one, or none for silence; a window whose text stops short of its
        speech is decoded again as two halves, and gets theirs."""
        ex, opts = self.ex, self.options
        heard = [WindowAudio(w.samples(self.jobs[w.job].audio)) for w in batch]
        live = [i for i, a in enumerate(heard) if not a.is_digital_silence()]
        out: list[list[Segment]] = [[] for _ in batch]
        if not live:
            return out
        with ex.stats.operation("prefill", len(live)):
            enc, keys = ex.runtime.encode_cached([ex.log_mel.window(heard[i].samples)[0] for i in live])
        prompts = []
        for row, i in enumerate(live):
            transcript = self.jobs[batch[i].job].transcript
            if not transcript.language:
                transcript.language, transcript.language_probability = ex.detect_language_encoded(
                    enc[row:row + 1])[0]
            prompts.append(ex.tokens.prompt(self.prompt_tokens, self._language(transcript), opts.task,
                                            timestamps=self.timestamps))
        audios = [heard[i] for i in live]
        firsts: list[DecodeResult | None] = [None] * len(live)
        if opts.beam_size == 1 and opts.temperatures[0] == 0:
            firsts = ex.decoder.decode_batch(enc, prompts, 0.0, timestamps=self.timestamps, cancel=self.cancel,
                                             stop_loops=opts.repetition_threshold, audio=audios)
        short: list[tuple[int, int, DecodeResult]] = []  # (window, row, result) of windows that stopped short
        for row, i in enumerate(live):
            result = ex.decode_window(enc[row:row + 1], prompts[row], opts, self.cancel, first=firsts[row],
                                      seed_from=keys[row], audio=audios[row])
            if is_silence(result, opts, audios[row]):
                continue
            if self._stops_short(batch[i], result.text):
                short.append((i, row, result))
            else:
                out[i] = self._segments(batch[i], result, enc[row:row + 1])
        if short:
            redone = self._redo_short([(batch[i], result, enc[row:row + 1], prompts[row], audios[row])
                                       for i, row, result in short])
            for (i, _, _), segments in zip(short, redone):
                out[i] = segments
        return out

    def _redo_short(self, short: list[tuple]) -> list[list[Segment]]:
        """Windows whose text stopped short of their speech (without timestamp tokens Whisper may end a
        window at a change of voice or room, as if the speech after it were not there): each one's text is
        continued over its own encoder output (``continued``). A text the model, forced on, cannot extend
        (no new word, or only an unlikely one) heard its speech: its words were counted slowly (spelled letters
        and digits, "TJWB 7959", count as two) rather than speech left out, and it is kept. A continued text
        that still stops short goes to ``_decode_rest``.  ``short``: (window, result, its encoder output, its
        prompt, its audio); returns each one's segments."""
        if not self.options.extra.get("chunk_continue", True):   # measured against (README C5)
            return self._decode_rest([item[:4] for item in short])
        done: list[tuple] = []
        for window, result, enc, prompt, audio in short:
            more = continued(self.ex, result, enc, prompt, audio, self.options, self.timestamps, self.cancel)
            again = more is not result and self._stops_short(window, more.text)
            done.append((window, more, enc, prompt, again))
        rest = iter(self._decode_rest([item[:4] for item in done if item[4]]))
        return [next(rest) if again else self._segments(window, result, enc)
                for window, result, enc, _, again in done]

    def _stops_short(self, window: ChunkWindow, text: str) -> bool:
        return stops_short(window, text, self.ex.log_mel.sample_rate, self.floor)

    def _decode_rest(self, short: list[tuple]) -> list[list[Segment]]:
        """Windows whose text, continued (or not: ``chunk_continue``), still stops short: the chunks after the
        text (``_heard``), or else both halves, are decoded as windows of their own; the result is kept when it
        hears more words (the window's own segment is only made, and its words aligned, when not).  ``short``:
        (window, result, its encoder output, its prompt); returns each one's segments."""
        plans = []  # per short window: how many chunks its text heard (None: halves), the windows to decode
        for window, result, enc, prompt in short:
            heard = self._heard(window, result, enc, prompt)
            if heard is None:
                plans.append((None, split(window)))
            else:
                plans.append((heard, [ChunkWindow(window.job, window.spans[heard:])]))
        todo = [w for _, windows in plans for w in windows]
        size = max(self.options.batch_windows, 1)
        decoded = [segments for at in range(0, len(todo), size) for segments in self._decode(todo[at:at + size])]
        out = []
        for (window, result, enc, _), (heard, windows) in zip(short, plans):
            redone, decoded = decoded[:len(windows)], decoded[len(windows):]
            new = [segment for segments in redone for segment in segments]
            if heard is not None:
                new = self._segments(window, result, enc, heard) + new
            out.append(new if _words(new) > word_count(result.text) else self._segments(window, result, enc))
        return out

    def _heard(self, window: ChunkWindow, result: DecodeResult, enc, prompt: list[int]) -> int | None:
        """How many chunks ``result``'s text heard (``chunks_heard``, the text aligned to the window's
        audio by cross-attention); None when it reaches the last or those chunks stop short too."""
        ex, st = self.ex, self.ex.tokens
        tokens = [t for t in result.tokens if t < st.eot]
        if len(tokens) < 2:
            return None
        samples = int(window.lengths().sum())
        starts, _ = align_tokens(ex.runtime, enc, prompt[prompt.index(st.sot):], tokens,
                                 min(samples, ex.log_mel.n_samples) // ex.log_mel.hop, eot=st.eot,
                                 no_timestamps=st.no_timestamps)
        heard = chunks_heard(window, float(starts[-2]), ex.log_mel.sample_rate)
        kept = ChunkWindow(window.job, window.spans[:heard])
        if heard == len(window.spans) or self._stops_short(kept, result.text):
            return None
        return heard

    def _segments(self, window: ChunkWindow, result: DecodeResult, enc, chunks: int | None = None) -> list[Segment]:
        segment = self._segment(window, result, enc, chunks)
        return [segment] if segment is not None else []

    def _language(self, transcript: Transcript) -> str | None:
        return transcript.language if self.ex.tokens.is_multilingual else None

    def _segment(self, window: ChunkWindow, result: DecodeResult, enc, chunks: int | None = None) -> Segment | None:
        """``result`` as one segment over the window's speech, or over its first ``chunks`` only."""
        ex = self.ex
        tokens = [t for t in result.tokens if t < ex.tokens.eot]
        text = ex.decode_text(tokens)
        if not text.strip():
            return None
        timeline = window.timeline(ex.log_mel.sample_rate)
        end = float(window.lengths()[:chunks].sum()) / ex.log_mel.sample_rate
        segment = Segment(id=0, start=0.0, end=end, text=text, tokens=tokens,
                          avg_logprob=result.avg_logprob, compression_ratio=result.compression_ratio,
                          no_speech_prob=result.no_speech_prob, temperature=result.temperature)
        if self.options.word_timestamps:
            transcript = self.jobs[window.job].transcript
            ex.add_word_timestamps([segment], enc, self.options, self._language(transcript))
        segment = timeline.remap([segment])[0]
        segment.start, segment.end = round(segment.start, 3), round(segment.end, 3)
        return segment


def transcribe_chunked(ex: "WhisperModelExecutor", audios: Sequence, options: TranscribeOptions,
                       cancel: CancelToken | None = None, *,
                       on_done: Callable[[int, Transcript], None] | None = None,
                       on_progress: Callable[[int, Progress], None] | None = None,
                       on_segment: Callable[[int, Segment], None] | None = None) -> list[Transcript]:
    """Transcribe several inputs (options already checked, the executor's lock held), their windows
    sharing batches; callbacks as ``batched.transcribe_many``'s.  One Transcript per input, in order."""
    from .batched import load_samples

    if options.batch_windows < 2:
        options = replace(options, batch_windows=DEFAULT_CHUNKED_BATCH)
    jobs = [_Job(ex, options, load_samples(ex, a),
                 on_segment=None if on_segment is None else (lambda seg, i=i: on_segment(i, seg)),
                 on_progress=None if on_progress is None else (lambda p, i=i: on_progress(i, p)))
            for i, a in enumerate(audios)]
    join = options.extra.get("chunk_join", True)  # measured against, not for use
    lookback = options.extra.get("chunk_pause_lookback_s", PAUSE_LOOKBACK_S)  # likewise
    windows = plan([j.audio for j in jobs], ex.log_mel.n_samples, ex.log_mel.sample_rate, join, cancel, lookback)
    try:
        _Decoder(ex, options, jobs, cancel).run(windows, on_done)
    except Cancelled as exc:
        if len(jobs) == 1:
            exc.partial = jobs[0].transcript
        raise
    return [j.transcript for j in jobs]
