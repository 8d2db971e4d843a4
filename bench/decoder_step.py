"""Whisper's decoder, per token, warm: ours with each layer of a one-token step compiled by TorchScript
(the int8 default, ``executors/whisper/scripted_step.py``), ours with the same step run from Python, next to
faster-whisper's (CTranslate2 int8) decoder, greedy, on the same 30 s window of real speech.

    python bench/decoder_step.py                 # 1 and 2 threads, 7 rounds, medians
    python bench/decoder_step.py --threads 1 --rounds 11
    python bench/decoder_step.py --threads 1 --parts   # also: where a token of ours goes, by part

A token of ours is a step (four layers, cross-attention over the window), the vocabulary projection and an
argmax; the peer's is ``generate`` (its prompt asks for no timestamps) with the end token suppressed, timed for
``--tokens`` and for a fifth of that and differenced, so that its encoder and start cost cancel out.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import format_table, interleaved, load_speech_dev, median, read_audio  # noqa: E402
from bench.transcribe import bundled_ct2_folder  # noqa: E402

PEER = "faster-whisper int8 (CTranslate2)"
DEFAULT = "ours, TorchScript layers (default)"


def ours(threads: int, mel, tokens: int) -> tuple[dict, Callable[[], dict[str, float]]]:
    """name -> a call that decodes ``tokens`` greedy tokens of ``mel`` and returns seconds a token; and a call
    that profiles the default's tokens (``_profiled``)."""
    import torch

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    ex = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en").path, device="cpu", threads=threads,
                                        quantize="int8")
    torch.set_num_threads(threads)
    runtime = ex.runtime
    encoded = runtime.encode(mel)
    prompt = torch.tensor([ex.tokens.prompt([], None, "transcribe", timestamps=False)])

    @torch.inference_mode()
    def decode(python: bool) -> float:
        with runtime.python_steps() if python else contextlib.nullcontext():
            store = runtime.new_store(encoded)
            token = runtime.logits(runtime.step(store, prompt)[:, -1]).argmax(dim=-1, keepdim=True)
            start = time.perf_counter()
            for _ in range(tokens):
                token = runtime.logits(runtime.step(store, token)[:, -1]).argmax(dim=-1, keepdim=True)
            return (time.perf_counter() - start) / tokens

    calls = {DEFAULT: lambda: decode(False), "ours, Python step": lambda: decode(True)}
    return calls, lambda: _profiled(runtime, encoded, prompt, tokens)


# the parts of a token that its operators are counted in (``_part``: the first that matches)
PARTS = ("cross-attention over the window", "vocabulary (projection, argmax, embedding lookup)",
         "layers' int8 linears", "everything else")


def _part(name: str, shapes: list, vocab: int, window: int, d_model: int) -> str:
    flat = [d for shape in shapes if isinstance(shape, list) for d in shape]
    if window in flat and name in ("aten::bmm", "aten::_softmax", "aten::matmul"):
        return PARTS[0]
    if vocab in flat or name == "aten::argmax" or (
            name == "quantized::linear_dynamic" and shapes[0][-1:] == [d_model + 2]):  # its two range columns
        return PARTS[1]
    if name == "quantized::linear_dynamic":
        return PARTS[2]
    return PARTS[3]


def _profiled(runtime, encoded, prompt, tokens: int) -> dict[str, float]:
    """Self CPU time a token of the default step spends in each of ``PARTS``, as shares of the whole."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    vocab, window, d_model = runtime.proj_out.weight.shape[0], encoded.shape[1], encoded.shape[2]
    with torch.inference_mode():
        store = runtime.new_store(encoded)
        token = runtime.logits(runtime.step(store, prompt)[:, -1]).argmax(dim=-1, keepdim=True)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(tokens):
                token = runtime.logits(runtime.step(store, token)[:, -1]).argmax(dim=-1, keepdim=True)
    spent = dict.fromkeys(PARTS, 0.0)
    for event in prof.key_averages(group_by_input_shape=True):
        spent[_part(event.key, event.input_shapes, vocab, window, d_model)] += event.self_cpu_time_total
    total = sum(spent.values())
    return {part: micros / total for part, micros in spent.items()}


def peer_times(threads: int, mel, tokens: int, rounds: int) -> list[float]:
    """CTranslate2 in a process of its own (torch in a process that has run CTranslate2 was measured ~1.8x
    slower: bench/transcribe.py)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_peer, (threads, mel.numpy(), tokens, rounds))


def _peer(threads: int, mel, tokens: int, rounds: int) -> list[float]:
    import ctranslate2

    model = ctranslate2.models.Whisper(str(bundled_ct2_folder()), device="cpu", compute_type="int8",
                                       intra_threads=threads)
    features = ctranslate2.StorageView.from_array(mel)
    vocab = _ct2_ids()
    prompt = [[vocab["<|startoftranscript|>"], vocab["<|notimestamps|>"]]]

    def run(length: int) -> tuple[float, int]:
        """Seconds of a ``generate`` call and the tokens it made (CTranslate2 made length / 2 here)."""
        start = time.perf_counter()
        out = model.generate(features, prompt, max_length=length, beam_size=1,
                             suppress_tokens=[-1, vocab["<|endoftext|>"]], suppress_blank=False)
        return time.perf_counter() - start, len(out[0].sequences_ids[0])

    run(2 * tokens)
    short = max(tokens // 5, 8)
    pairs = [(run(2 * tokens), run(2 * short)) for _ in range(rounds)]
    return [(a - b) / (n - m) for (a, n), (b, m) in pairs]


def _ct2_ids() -> dict[str, int]:
    """The peer's token ids, from its vocabulary file (one token a line)."""
    lines = (bundled_ct2_folder() / "vocabulary.txt").read_text(encoding="utf-8").splitlines()
    return {token: i for i, token in enumerate(lines)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=150, help="greedy tokens a round decodes")
    ap.add_argument("--parts", action="store_true",
                    help="also profile the default's token and print the time of each part (torch.profiler)")
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    from executors.models.store import resolve_model
    from executors.whisper.features import LogMel
    from executors.whisper.model_files import MelSettings

    clips = load_speech_dev()[:12]
    audio = np.concatenate([read_audio(c.path) for c in clips])[:16000 * 30]
    mel = LogMel(MelSettings.read(resolve_model("whisper-tiny.en").path), torch.device("cpu")).window(audio)[0][None]
    rows, part_rows = [], []
    for threads in map(int, args.threads.split(",")):
        calls, profile = ours(threads, mel, args.tokens)
        for call in calls.values():
            call()
        times = _per_token(calls, args.rounds)
        times[PEER] = peer_times(threads, mel, args.tokens, args.rounds)
        peer = median(times[PEER])
        for name, seconds in times.items():
            rows.append([name, str(threads), f"{median(seconds) * 1000:.2f}", f"{median(seconds) / peer:.2f}"])
        if args.parts:
            ours_ms = median(times[DEFAULT]) * 1000
            part_rows += [[part, str(threads), f"{share * ours_ms:.2f}", f"{share:.0%}"]
                          for part, share in profile().items()]
    print(format_table(["decoder", "thr", "ms a token", "x peer"], rows))
    if part_rows:
        print("\nwhere a token of the default goes (profiled shares of its self CPU time, times the ms above):")
        print(format_table(["part", "thr", "ms a token", "share"], part_rows))
    print(f"{args.tokens} tokens a round, {args.rounds} interleaved rounds, medians; window: the first 30 s of "
          f"{len(clips)} dev clips joined")
    return 0


def _per_token(calls: dict, rounds: int) -> dict[str, list[float]]:
    """Each call returns its own seconds a token (its prompt left out): run them interleaved, keep those."""
    out: dict[str, list[float]] = {name: [] for name in calls}
    interleaved(calls, rounds, lambda name, _rep, _wall, seconds: out[name].append(seconds))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
