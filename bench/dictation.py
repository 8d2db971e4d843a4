"""Live dictation: short encoder context vs the full 30 s window, then latency at real-time pace.

1. Context accuracy: every dev utterance gets one pass with the encoder shortened to its audio
   (several paddings) and one pass on the padded 30 s window, interleaved; prints WER, how many
   short passes looped (hallucinated repeats), and the median pass time as a ratio to the full one.
2. Live pace: the utterances are joined with silent gaps and played through ``FileSource`` at
   ``--speed`` (1 = real time) into the ``DictationEngine``; prints utterance latency p50/p95 (end
   of speech → final commit), lag of committed text behind the live audio, the engine's RTF and
   its WER next to one offline ``transcribe`` of the same audio (the peer, same run).

    python bench/dictation.py                  # 20 utterances, 1 s gaps
    python bench/dictation.py --all            # the whole dev set
    python bench/dictation.py --held-out       # 45 utterances the dictation test never hears
    python bench/dictation.py --set speech-wide --count 12 --skip-context   # 12 voices of speech-wide, live
    python bench/dictation.py --skip-context   # only the live run
    python bench/dictation.py --final-window 30   # final passes on the padded 30 s window (default 20 s)
    python bench/dictation.py --final-pass-ms 250   # the final pass only once the pause is confirmed
    python bench/dictation.py --type           # also type committed text into the focused window
                                               # (to see that typing leaves the latency alone)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import (
    corpus_wer,
    dev_slice,
    evenly_spaced,
    format_table,
    load_speech_dev,
    long_audio,
    median,
    read_audio,
)
from bench.eval_data import eval_path


def load_executor(threads: int, quantize: str | None):
    import torch

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    torch.set_num_threads(threads)
    resolved = resolve_model("whisper-tiny.en", kind="whisper")
    return WhisperModelExecutor.from_path(resolved.path, device="cpu", dtype="float32", threads=threads,
                                          quantize=quantize, model_id=resolved.model_id)


def context_accuracy(ex, utterances, pads: list[float], min_contexts: list[float]) -> None:
    from executors.dictation.transcriber import PassTranscriber

    variants = {"full 30 s": PassTranscriber(ex, None, short_context=False)}
    for pad in pads:
        variants[f"short +{pad:g} s"] = PassTranscriber(ex, None, short_context=True, pad_s=pad)
        variants[f"short +{pad:g} s, loops dropped"] = PassTranscriber(ex, None, short_context=True, pad_s=pad)
        variants[f"short +{pad:g} s, loops dropped"].collapse_loops = False
    for low in min_contexts:
        variants[f"short >= {low:g} s"] = PassTranscriber(ex, None, short_context=True, pad_s=1.0, min_context_s=low)
    texts = {k: [] for k in variants}
    times = {k: [] for k in variants}
    loops = {k: 0 for k in variants}
    for i, u in enumerate(utterances):
        audio = read_audio(u.path)
        names = list(variants)
        for name in names[i % len(names):] + names[:i % len(names)]:  # rotate who goes first
            t0 = time.perf_counter()
            words = variants[name].words(audio)
            times[name].append(time.perf_counter() - t0)
            loops[name] += words is None
            texts[name].append(" ".join(w.text for w in words or []))
    refs = [u.reference for u in utterances]
    full = median(times["full 30 s"])
    rows = [[k, f"{corpus_wer(refs, texts[k]):.2f}", str(loops[k]), f"{median(times[k]) * 1000:.0f}",
             f"{median(times[k]) / full:.2f}"] for k in variants]
    print(f"\nOne pass per utterance ({len(utterances)} utterances, tiny.en, {ex.quantized or 'fp32'}):")
    print(format_table(["encoder context", "WER %", "loops", "median pass ms", "× full"], rows))


def live(ex, utterances, gap: float, speed: float, step: float, pad: float, final_window: float | None = None,
         type_text: bool = False, final_pass_ms: int | None = None):
    """One live run (printed); returns its ``DictationSummary``."""
    from executors.dictation import (
        Committed,
        DictationEngine,
        DictationOptions,
        FileSource,
    )

    audio, reference = long_audio(utterances, seconds=1e9, gap=gap)
    audio = np.concatenate([np.zeros(int(gap * 16000), np.float32), audio])
    commits: list[Committed] = []
    typing = None
    if type_text:  # as the app and `ferrum dictate --type` do: a TypingSession fed from the events
        from executors.dictation.typing import TypingSession, make_typist

        typing = TypingSession(make_typist())

    def on_event(event):
        if isinstance(event, Committed):
            commits.append(event)
        if typing is not None:
            typing.feed(event)

    options = DictationOptions(step_s=step, context_pad_s=pad)
    if final_window is not None:
        options.final_window_s = final_window
    if final_pass_ms is not None:
        options.final_pass_ms = final_pass_ms
    engine = DictationEngine(ex, options, on_event=on_event)
    t0 = time.perf_counter()
    summary = engine.run(FileSource(audio, 16000, speed=speed))
    wall = time.perf_counter() - t0
    if typing is not None:
        typing.close()
    t0 = time.perf_counter()
    offline = ex.transcribe(audio).text
    offline_s = time.perf_counter() - t0
    seconds = len(audio) / 16000
    lat = np.array(summary.latencies) * 1000
    lags = np.array(summary.lags) * 1000
    print(f"\nLive dictation at {speed:g}× real time: {len(utterances)} utterances, {seconds:.1f} s of audio, "
          f"step {step:g} s, final pass on a {options.final_window_s:g} s window "
          f"{options.final_pass_ms} ms into a pause, "
          f"wall {wall:.1f} s{', typing into the focused window' if typing is not None else ''}")
    print(format_table(["figure", "value"], [
        ["utterances ended", str(summary.utterances)],
        ["latency p50 / p95 ms", f"{np.percentile(lat, 50):.0f} / {np.percentile(lat, 95):.0f}" if lat.size else "-"],
        ["lag p50 / p95 ms", f"{np.percentile(lags, 50):.0f} / {np.percentile(lags, 95):.0f}" if lags.size else "-"],
        ["passes", f"{summary.passes} ({engine.transcriber.fallbacks} full-window fallbacks)"],
        ["engine RTF (compute / audio)", f"{summary.rtf:.3f}"],
        ["offline transcribe RTF (peer)", f"{offline_s / seconds:.3f}"],
        ["engine RTF / offline RTF", f"{summary.rtf / (offline_s / seconds):.2f}"],
        ["dropped audio s", f"{summary.dropped_seconds:.2f}"],
        ["max utterance buffer s", f"{summary.max_buffer_seconds:.1f}"],
        ["WER dictation / offline %", (f"{corpus_wer([reference], [summary.text]):.2f} / "
                                       f"{corpus_wer([reference], [offline]):.2f}")],
    ] + ([["typed characters (typing error)", f"{len(typing.typed)} ({typing.error or 'none'})"]]
         if typing is not None else [])))
    return summary


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=20, help="dev utterances (default 20)")
    p.add_argument("--all", action="store_true", help="the whole dev set")
    p.add_argument("--spread", action="store_true",
                   help="speech-dev: --count utterances spread over the set (as speech-wide always is)")
    p.add_argument("--set", default="speech-dev", choices=("speech-dev", "speech-wide"),
                   help="the evaluation set (speech-wide: --count utterances spread over its sorted list)")
    p.add_argument("--held-out", action="store_true",
                   help="45 telephone prompts outside the first 90 (the slice tests/test_dictation_engine.py uses)")
    p.add_argument("--gap", type=float, default=1.0, help="silence between utterances, seconds")
    p.add_argument("--speed", type=float, default=1.0, help="1 = real time")
    p.add_argument("--step", type=float, default=1.0, help="re-transcription step, seconds (the engine's default)")
    p.add_argument("--pad", type=float, default=1.0, help="padding after the audio in the short context")
    p.add_argument("--pads", default="0,1", help="paddings compared in the context table")
    p.add_argument("--min-contexts", default="8", help="minimum short contexts compared (seconds)")
    p.add_argument("--final-window", type=float, default=None,
                   help="seconds the final pass encodes at least (30: the padded window; default: the engine's)")
    p.add_argument("--final-pass-ms", type=int, default=None,
                   help="how far into a pause the final pass starts (default: the engine's)")
    p.add_argument("--threads", type=int, default=2, help="CPU threads (this machine has 2 cores)")
    p.add_argument("--quantize", default="int8", help="int8 (default) or none")
    p.add_argument("--skip-context", action="store_true")
    p.add_argument("--skip-live", action="store_true")
    p.add_argument("--type", action="store_true", help="type committed text into the focused window too")
    args = p.parse_args()
    if args.set == "speech-wide":
        every = load_speech_dev(eval_path("speech-wide"))
        utterances = every if args.all else evenly_spaced(every, args.count)
    else:
        utterances = load_speech_dev() if args.all else (evenly_spaced(load_speech_dev(), args.count) if args.spread
                                                         else dev_slice(args.count))
    if args.held_out:
        seen = {u.path for u in dev_slice(90)}
        utterances = [u for u in load_speech_dev() if u.path.parent.name == "asterisk" and u.path not in seen][::4][:45]
    ex = load_executor(args.threads, None if args.quantize == "none" else args.quantize)
    if not args.skip_context:
        context_accuracy(ex, utterances, [float(x) for x in args.pads.split(",")],
                         [float(x) for x in args.min_contexts.split(",") if x])
    if not args.skip_live:
        live(ex, utterances, args.gap, args.speed, args.step, args.pad, args.final_window, args.type,
             args.final_pass_ms)


if __name__ == "__main__":
    main()
