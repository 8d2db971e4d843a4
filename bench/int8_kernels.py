"""What could replace fbgemm's deprecated int8 linear under Whisper's int8 layers: speed and text.

``RowInt8Linear`` quantises each row of activations over its own range and hands the GEMM to a kernel
(``executors/whisper/fbgemm.py``: torch's deprecated quantised tensors and ``quantized::linear_dynamic``).
This script gives the layers other kernels through the same seam (``RowInt8Linear.kernel``):

* ``onednn``: oneDNN's int8 matmul through ``onednn::qlinear_pointwise`` on uint8 activations and int8
  weights (the operator torch's PT2E x86 quantisation lowers to), ``executors/whisper/onednn.py``: the
  default's kernel for the layers that take a window per call on CPUs with AMX tiles; where it
  saturates 8-bit products (0.51 where 64 is exact on an AVX2 CPU without VNNI) it is not offered;
* ``int_mm``: ``torch._int_mm`` (int8 x int8 -> int32), as BERT's int8 path uses it; torchao's
  ``Int8DynamicActivationInt8WeightConfig`` runs this same operator on the CPU when not compiled;
* ``w8pack``: ``torch._weight_int8pack_mm`` (int8 weights, float activations), as the vector scan;

and compares them with fbgemm and with float32 ``F.linear``:

1. per layer, at tiny.en's shapes: a 30 s window's 1,500 encoder rows, and a decoder step's one row
   (the vocabulary projection included), median microseconds and the ratio to fbgemm in the same run;
2. whole model (fbgemm everywhere, the default's mix where it differs, onednn everywhere, float32): the encoder on one 30 s window, one decoder step, the
   transcription (default options) of each clip of tests/data/speech (or ``--clips`` of them), interleaved, medians; the text of every clip
   next to fbgemm's, and the WER against the references. ``int_mm`` and ``w8pack`` measured 6-83x
   slower than fbgemm per layer on an AVX2 CPU, so they stay out of the whole-model runs.

The per-layer table also times the decoder's one-row calls as they were before: fbgemm's packing of
each decoder layer kept twice, the second copy holding the bias.

    python bench/int8_kernels.py                 # 1 thread, every clip of tests/data/speech, 3 rounds
    python bench/int8_kernels.py --threads 2 --clips 20 --rounds 5
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import corpus_wer, format_table, interleaved, load_speech_dev, median, read_audio  # noqa: E402
from executors.whisper import fbgemm, onednn  # noqa: E402
from executors.whisper.int8_linear import RowInt8Linear, reduce_range  # noqa: E402

SPEECH = Path(__file__).resolve().parents[1] / "tests" / "data" / "speech"
# (rows, in, out): tiny.en's encoder layers on a 30 s window, and a decoder step's projections
ENCODER_SHAPES = [(1500, 384, 384), (1500, 384, 1536), (1500, 1536, 384)]
STEP_SHAPES = [(1, 384, 1152), (1, 384, 384), (1, 384, 1536), (1, 1536, 384), (1, 384, 51864)]


@dataclass(frozen=True)
class Packed:
    weight: object
    nbytes: int


def _dynamic_uint8(x: torch.Tensor, reduce_range: bool) -> tuple[torch.Tensor, float, int]:
    """``x`` quantised as fbgemm's dynamic linear does: one affine uint8 grid over [min(x, 0), max(x, 0)]."""
    top = 127 if reduce_range else 255
    low, high = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = max(high - low, 1e-12) / top
    zero = int(round(-low / scale))
    return torch.round(x / scale).add_(zero).clamp_(0, top).to(torch.uint8), scale, zero


class _Kernel:
    """What ``RowInt8Linear`` asks of a kernel beside ``pack`` and ``linear`` (see fbgemm.py)."""

    def full_range_is_exact(self) -> bool:
        weight = self.pack(torch.full((1, 64), 127, dtype=torch.int8), torch.full((1,), 1 / 127))
        return self.linear(torch.ones(1, 64), weight, False).item() == 64.0

    def problem(self):
        return None


class IntMm(_Kernel):
    NAME = "torch._int_mm (int8 x int8 -> int32)"

    def pack(self, weight_int8, scales):
        sums = weight_int8.sum(dim=1, dtype=torch.int32)
        return Packed((weight_int8.t().contiguous(), scales.float(), sums), weight_int8.numel())

    def linear(self, x, packed, reduce_range, bounds=None):
        weight_t, scales, sums = packed.weight
        q, scale, zero = _dynamic_uint8(x.reshape(-1, x.shape[-1]), reduce_range)
        signed = (q.to(torch.int16) - 128).to(torch.int8)  # W (q - zero) = W (q - 128) + (128 - zero) W 1
        acc = torch._int_mm(signed, weight_t) + (128 - zero) * sums
        return (acc.float() * (scale * scales)).reshape(*x.shape[:-1], -1)


class WeightOnly(_Kernel):
    NAME = "torch._weight_int8pack_mm (int8 weights, float activations)"

    def pack(self, weight_int8, scales):
        return Packed((weight_int8, scales.float()), weight_int8.numel())

    def linear(self, x, packed, reduce_range, bounds=None):
        weight, scales = packed.weight
        return torch._weight_int8pack_mm(x.reshape(-1, x.shape[-1]), weight, scales).reshape(*x.shape[:-1], -1)

    def full_range_is_exact(self):
        return True


KERNELS = {"fbgemm": fbgemm, "onednn": onednn, "int_mm": IntMm(), "w8pack": WeightOnly()}


def use_kernel(name: str) -> None:
    RowInt8Linear.kernel = KERNELS[name]
    reduce_range.cache_clear()


def _time(call, budget_s: float = 0.3, most: int = 50) -> float:
    """Median seconds of ``call`` over repeats filling about ``budget_s`` (3 at least)."""
    call()
    first = time.perf_counter()
    call()
    reps = max(3, min(most, int(budget_s / max(time.perf_counter() - first, 1e-6))))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return median(times)


def layer_table(names: list[str]) -> str:
    torch.manual_seed(0)
    columns = ["float32", *names, "bias packed"]
    rows = []
    for m, k, n in ENCODER_SHAPES + STEP_SHAPES:
        linear = torch.nn.Linear(k, n)
        x = torch.randn(m, k) if m > 1 else torch.randn(1, 1, k)
        times = {"float32": _time(lambda: torch.nn.functional.linear(x, linear.weight, linear.bias))}
        for name in names:
            use_kernel(name)
            layer = RowInt8Linear.from_linear(linear)
            times[name] = _time(lambda: layer(x)) if m > 1 else _time(lambda: layer.token_rows(x))
        use_kernel("fbgemm")
        if m == 1:  # how decoder steps called fbgemm before: through a second packed copy holding the bias
            with_bias = fbgemm._prepack(layer.weight_int8, layer.scales, layer.bias)
            times["bias packed"] = _time(lambda: torch.ops.quantized.linear_dynamic(x, with_bias, reduce_range()))
        base = times["fbgemm"]
        rows.append([f"{m}x{k}->{n}", *(f"{times[c] * 1e6:.0f} ({times[c] / base:.2f})" if c in times else ""
                                        for c in columns)])
    header = ["layer (rows x in -> out)", *(f"{c} us (/fbgemm)" for c in columns[:-1]),
              "fbgemm, bias in a second packed copy, us (/fbgemm)"]
    return format_table(header, rows)


def load_variants(threads: int) -> dict:
    """tiny.en several times: int8 layers all on fbgemm, as the default loads them (oneDNN for the layers
    that take a window per call where the CPU has AMX tiles), all on oneDNN, and float32 weights."""
    import os
    from unittest import mock

    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor
    from executors.whisper.quantize import many_rows_kernel

    path = resolve_model("whisper-tiny.en", kind="whisper").path
    load = lambda **kw: WhisperModelExecutor.from_path(path, device="cpu", threads=threads, **kw)  # noqa: E731
    with mock.patch.dict(os.environ, {"FERRUM_INT8_KERNEL": "fbgemm"}):
        variants = {"fbgemm": load()}
    if many_rows_kernel() is not fbgemm:
        variants["default"] = load()
    if onednn.problem() is None:
        use_kernel("onednn")
        variants["onednn"] = load()
        use_kernel("fbgemm")
    variants["float32"] = load(quantize=None)
    return variants


def step_seconds(ex, encoded: torch.Tensor, steps: int = 32) -> float:
    """Median seconds of one greedy decoder step (one window, vocabulary projection included)."""
    runtime = ex.runtime
    store = runtime.new_store(encoded)
    prompt = torch.tensor([ex.tokens.sot_sequence(None, "transcribe")])
    token = runtime.logits(runtime.step(store, prompt))[:, -1:].argmax(-1)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        token = runtime.logits(runtime.step(store, token))[:, -1].argmax(-1, keepdim=True)
        times.append(time.perf_counter() - start)
    return median(times)


def model_table(variants: dict, clips, rounds: int) -> str:
    audios = [read_audio(u.path) for u in clips]
    first = next(iter(variants.values()))
    mel = first.log_mel.window(audios[0])[0][None]
    texts: dict[str, list[str]] = {}

    def runs(ex):
        encoded = ex.runtime.encode(mel)
        return {"encoder": lambda: ex.runtime.encode(mel), "step": lambda: step_seconds(ex, encoded),
                "clips": lambda: [ex.transcribe(a).text for a in audios]}

    per_variant = {name: runs(ex) for name, ex in variants.items()}
    encoder = interleaved({n: r["encoder"] for n, r in per_variant.items()}, rounds)
    steps: dict[str, list[float]] = {n: [] for n in variants}
    interleaved({n: r["step"] for n, r in per_variant.items()}, rounds,
                on_result=lambda name, rep, dt, out: steps[name].append(out))
    clip_times = interleaved({n: r["clips"] for n, r in per_variant.items()}, rounds,
                             on_result=lambda name, rep, dt, out: texts.setdefault(name, out))
    references = [u.reference for u in clips]
    rows = []
    for name in variants:
        same = sum(a == b for a, b in zip(texts[name], texts["fbgemm"]))
        rows.append([name, *(f"{median(t[name]) * scale:.1f} ({median(t[name]) / median(t['fbgemm']):.2f})"
                             for t, scale in ((encoder, 1e3), (steps, 1e3), (clip_times, 1.0))),
                     f"{same}/{len(clips)}", f"{corpus_wer(references, texts[name]):.2f}"])
    return format_table(["weights", "encoder, 30 s window, ms (/fbgemm)", "decoder step ms (/fbgemm)",
                         f"{len(clips)} clips s (/fbgemm)", "text as fbgemm", "WER %"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clips", type=int, default=None, help="the first N clips of tests/data/speech (default: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-layers", action="store_true", help="only the whole-model comparison")
    parser.add_argument("--skip-model", action="store_true", help="only the per-layer comparison")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"{args.threads} thread(s); fbgemm's 8-bit grid exact here: {fbgemm.full_range_is_exact()}\n")
    if not args.skip_layers:
        print(layer_table(list(KERNELS)), "\n", flush=True)
    if not args.skip_model:
        print(model_table(load_variants(args.threads), load_speech_dev(SPEECH)[:args.clips], args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
