"""Silero VAD over a ~600 s file joined from an evaluation set: our network run (``executors/audio/silero.py``,
many windows a call) next to silero's own ONNX runs (one window a call; its batched "sequence" model) and
faster-whisper's VAD, warm, interleaved, medians; and how far each one's probabilities are from silero
stepping window by window.

    python bench/vad.py                                # speech-dev and speech-wide, 1 and 2 threads, 3 reps
    python bench/vad.py --set speech-wide --threads 1 --reps 5

The ONNX sessions of silero's and faster-whisper's wrappers are made with one thread whatever ``--threads``
says (their own choice); ``--threads`` sets torch's, which only ours uses.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import format_table, interleaved, load_speech_dev, long_audio, median  # noqa: E402
from bench.eval_data import eval_path  # noqa: E402

from executors.audio.silero import WINDOW  # noqa: E402


def engines(audio: np.ndarray) -> dict:
    """name -> a call returning per-window speech probabilities of ``audio`` (padded to whole windows)."""
    import torch
    from faster_whisper.vad import get_vad_model
    from silero_vad import load_silero_vad

    from executors.audio.vad import speech_probabilities

    stepped, sequence, peer = load_silero_vad(onnx=True), load_silero_vad(sequence=True), get_vad_model()

    def one_window_a_call():
        stepped.reset_states()
        return np.array([stepped(torch.from_numpy(w), 16000).item() for w in audio.reshape(-1, WINDOW)])

    return {"ours (many windows a call)": lambda: speech_probabilities(audio),
            "silero ONNX, a window a call": one_window_a_call,
            "silero sequence ONNX (512 a call)": lambda: sequence.audio_forward(audio),
            "faster-whisper VAD": lambda: peer(audio).reshape(-1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default="speech-dev,speech-wide")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--long-seconds", type=float, default=600.0)
    args = ap.parse_args(argv)
    import torch

    for name in args.set.split(","):
        audio, _ = long_audio(load_speech_dev(eval_path(name)), args.long_seconds)
        audio = np.pad(audio, (0, -audio.size % WINDOW)).astype(np.float32)
        calls = engines(audio)
        for threads in map(int, args.threads.split(",")):
            torch.set_num_threads(threads)
            probs: dict[str, np.ndarray] = {}
            times = interleaved(calls, args.reps, lambda key, _rep, _dt, out: probs.__setitem__(key, out))
            reference = probs["silero ONNX, a window a call"]
            rows = [[key, str(threads), f"{median(times[key]):.2f}",
                     f"{np.abs(probs[key] - reference).max():.1e}",
                     str(int(((probs[key] >= 0.5) != (reference >= 0.5)).sum()))] for key in calls]
            print(f"\n{audio.size / 16000:.0f} s joined from {name}, {audio.size // WINDOW} windows, "
                  f"{args.reps} reps, warm")
            print(format_table(["engine", "threads", "median s", "max |p - stepped|", "decisions differing"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
