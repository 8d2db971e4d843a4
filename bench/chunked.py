"""What each choice of the fast-long-files mode (``TranscribeOptions.chunked``) costs or saves, warm,
in one process: on a file joined from an evaluation set, interleaved, medians.

    python bench/chunked.py --set speech-dev --threads 1 --reps 3
                            [--variants chunked,timestamps,unjoined,inside,recode,floor1,noskip] [--long-order N]

Variants: the sequential default; chunked as shipped (VAD chunks joined into 30 s windows, no
timestamp tokens); chunked with timestamp tokens decoded (their times unused); chunked with one VAD
chunk per window (nothing joined); chunked with windows cut inside speech where the 30 s run out
(no move back to a pause); chunked with a window whose text stopped short decoded anew from the chunks
it left out (an encoder pass each) instead of first continued over its own encoder output (``recode``);
chunked with a window's text judged short below one word a second of its speech, the sequential path's floor,
instead of ``chunked.SHORT_WORDS_PER_SPEECH_SECOND`` (``floor1``);
the sequential default without decoding again, unprompted, a window whose text skipped its speech
(``noskip``). ``--long-order N`` shuffles the set's utterances with seed N before joining (0: the set's
order), for files the choices were not made on.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (corpus_wer, format_table, in_order, interleaved, load_speech_dev,  # noqa: E402
                          long_audio, median)
from bench.eval_data import eval_path  # noqa: E402

VARIANTS = {  # key: (label, options)
    "sequential": ("sequential (default)", {}),
    "chunked": ("chunked", {"chunked": True}),
    "timestamps": ("chunked, timestamp tokens", {"chunked": True, "extra": {"chunk_timestamps": True}}),
    "unjoined": ("chunked, one VAD chunk per window", {"chunked": True, "extra": {"chunk_join": False}}),
    "inside": ("chunked, windows cut inside speech", {"chunked": True, "extra": {"chunk_pause_lookback_s": 0}}),
    "recode": ("chunked, short windows decoded anew", {"chunked": True, "extra": {"chunk_continue": False}}),
    "floor1": ("chunked, short below 1 word a second", {"chunked": True, "extra": {"chunk_short_words_per_s": 1.0}}),
    "noskip": ("sequential, skipped speech kept", {"extra": {"skip_check": False}}),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="speech-dev", choices=("speech-dev", "speech-wide"))
    ap.add_argument("--long-seconds", type=float, default=600.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated keys of the variants to run")
    ap.add_argument("--long-order", type=int, default=0, help="shuffle the utterances with this seed (0: in order)")
    args = ap.parse_args(argv)

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    audio, reference = long_audio(in_order(load_speech_dev(eval_path(args.set)), args.long_order), args.long_seconds)
    ex = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en", kind="whisper").path, device="cpu",
                                        threads=args.threads)
    texts: dict[str, str] = {}
    windows: dict[str, int] = {}

    def run(key: str):
        def go():
            ex.encoder_cache.clear()
            transcript = ex.transcribe(audio, TranscribeOptions(language="en", **VARIANTS[key][1]))
            texts[key], windows[key] = transcript.text, len(transcript.segments)
        return go

    keys = ["sequential", *(k for k in args.variants.split(",") if k != "sequential")]
    times = interleaved({key: run(key) for key in keys}, args.reps,
                        lambda key, rep, dt, _: print(f"  rep {rep} {VARIANTS[key][0]:36s} {dt:7.2f} s", flush=True))
    base = median(times["sequential"])
    rows = [[VARIANTS[k][0], f"{median(times[k]):.2f}", f"{median(times[k]) / base:.2f}", str(windows[k]),
             f"{corpus_wer([reference], [texts[k]]):.2f}"] for k in keys]
    order = f", order {args.long_order}" if args.long_order else ""
    print(f"\n{len(audio) / 16000:.0f} s joined from {args.set}{order}, {args.threads} thread(s), {args.reps} reps, warm")
    print(format_table(["variant", "median s", "x sequential", "segments", "WER %"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
