"""One 30 s window through Whisper's encoder, warm, per precision: ours with int8 linears, ours with
bfloat16 matmuls (opt-in: FERRUM_CPU_BF16=1), float32, next to faster-whisper's (CTranslate2
int8) encoder on the same log-mel features.

    python bench/encoder.py                 # 1 and 2 threads, 10 rounds, medians
    python bench/encoder.py --threads 1 --rounds 20

Each round runs every encoder once on a real dev clip's window (the starting one rotates).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import format_table, interleaved, median, read_audio  # noqa: E402
from bench.transcribe import bundled_ct2_folder  # noqa: E402

PEER = "faster-whisper int8 (CTranslate2)"


def ours(threads: int, mel) -> dict:
    """name -> a call that encodes ``mel`` [1, 80, 3000] once with our encoder in that precision."""
    import torch

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    path = resolve_model("whisper-tiny.en").path
    found = {}
    for name, quantize, bf16 in (("ours int8", "int8", "0"), ("ours bfloat16 matmuls", "int8", "1"),
                                 ("ours float32", None, "0")):
        os.environ["FERRUM_CPU_BF16"] = bf16
        ex = WhisperModelExecutor.from_path(path, device="cpu", threads=threads, quantize=quantize)
        found[name] = lambda ex=ex: ex.runtime.encode(mel)
    os.environ.pop("FERRUM_CPU_BF16")
    torch.set_num_threads(threads)
    return found


def peer_times(threads: int, mel, rounds: int) -> list[float]:
    """CTranslate2's encoder in a process of its own (torch in a process that has run CTranslate2 was
    measured ~1.8x slower: bench/transcribe.py)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_peer, (threads, mel.numpy(), rounds))


def _peer(threads: int, mel, rounds: int) -> list[float]:
    import ctranslate2

    model = ctranslate2.models.Whisper(str(bundled_ct2_folder()), device="cpu", compute_type="int8",
                                       intra_threads=threads)
    features = ctranslate2.StorageView.from_array(mel)
    model.encode(features)
    return list(interleaved({"peer": lambda: model.encode(features)}, rounds)["peer"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts")
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)

    import torch

    from bench.common import load_speech_dev
    from executors.core.device import cpu_multiplies_bfloat16
    from executors.models.store import resolve_model
    from executors.whisper.features import LogMel
    from executors.whisper.model_files import MelSettings

    clip = load_speech_dev()[0].path
    mel = LogMel(MelSettings.read(resolve_model("whisper-tiny.en").path), torch.device("cpu")).window(
        read_audio(clip))[0][None]
    rows = []
    for threads in map(int, args.threads.split(",")):
        calls = ours(threads, mel)
        for call in calls.values():
            call()
        times = interleaved(calls, args.rounds)
        times[PEER] = peer_times(threads, mel, args.rounds)
        peer = median(times[PEER])
        for name, seconds in times.items():
            rows.append([name, str(threads), f"{median(seconds) * 1000:.1f}", f"{median(seconds) / peer:.2f}"])
    print(format_table(["encoder", "thr", "ms a window", "x peer"], rows))
    print(f"this CPU multiplies bfloat16 in hardware: {cpu_multiplies_bfloat16()}; clip: {clip.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
