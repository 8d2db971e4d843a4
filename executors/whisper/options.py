"""One options object for every transcription call (no 36-keyword signatures)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import InvalidParameterError


# Windows decoded together by the front-ends (CLI, app, API) unless the user picks another number:
# the fastest on a 2-core CPU for a long file at 1 and 2 threads and for many short files at 2 (at 1
# thread, many short files were within the noise; bench/transcribe_process.py, README "Benchmarks").
# One at a time won once a decoder step cost little beyond its per-window work (the cross-attention
# over 1,500 frames, one int8 kernel call per row), which batching does not share; batched spans also
# need extra windows for their tails.  GPUs were not measured.  Files shorter than 30 s get exactly the
# sequential text at any batch size.
DEFAULT_BATCH_WINDOWS = 1
# Several files given at once (``ferrum transcribe a.wav b.wav …``): their windows share batches of this
# many, each file decoded as alone (``split_files=False``): the same text, in 0.84-0.96x the time of one
# file after another for 197 short clips at 1 and 2 threads (README "Benchmarks", P4b, P4c).
DEFAULT_FILES_BATCH = 8


@dataclass
class TranscribeOptions:
    language: str | None = None          # None = detect (multilingual models); "en" for .en models
    task: str = "transcribe"             # or "translate"
    beam_size: int = 1
    best_of: int = 5                     # samples tried at temperature > 0
    temperatures: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    initial_prompt: str | None = None
    condition_on_previous_text: bool = True
    word_timestamps: bool = False
    vad_filter: bool = False
    no_speech_threshold: float = 0.6
    compression_ratio_threshold: float = 2.4
    log_prob_threshold: float = -1.0
    repetition_threshold: int | None = 3  # an n-gram of words this many times in a row (1 word: once more)
                                          # is a loop: retry hotter; None = off
    batch_windows: int = 1               # >1: decode several 30 s windows (of one file or many) together
    split_files: bool = True             # with batch_windows > 1 (and no VAD): cut a file longer than one
                                         # window at pauses into spans decoded side by side (other text
                                         # than alone); False: only different files' windows share batches,
                                         # each file decoded as alone (the same text)
    chunked: bool = False                # fast long files: VAD speech chunks decoded independently, in
                                         # batches (of 8 unless batch_windows says more), one segment per
                                         # window; executors/whisper/chunked.py
    extra: dict = field(default_factory=dict)

    def validate(self) -> "TranscribeOptions":
        if self.task not in ("transcribe", "translate"):
            raise InvalidParameterError(f"Unknown task '{self.task}'", "use 'transcribe' or 'translate'")
        if self.beam_size < 1:
            raise InvalidParameterError("beam_size must be at least 1", "use 1 for greedy decoding")
        if not self.temperatures:
            raise InvalidParameterError("temperatures must not be empty", "use (0.0,) for no fallback")
        if self.repetition_threshold is not None and self.repetition_threshold < 2:
            raise InvalidParameterError("repetition_threshold must be at least 2", "use None to turn the check off")
        if self.batch_windows < 1:
            raise InvalidParameterError("batch_windows must be at least 1", "use 1 for sequential decoding")
        return self
