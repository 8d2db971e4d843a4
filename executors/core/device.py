"""The one place that decides device, dtype and CPU threads.

Every executor calls ``resolve_device``; nothing else in the project inspects CUDA or MPS.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .errors import DeviceError, InvalidParameterError

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}


@dataclass(frozen=True)
class DeviceChoice:
    kind: str           # "cpu", "cuda" or "mps"
    index: int | None
    dtype_name: str     # "float32", "float16" or "bfloat16"
    threads: int

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.index}" if self.index is not None else self.kind

    @property
    def torch_device(self):
        import torch

        return torch.device(self.name)

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype_name)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def default_threads() -> int:
    """One thread per core we may use, capped: more threads than cores only adds contention."""
    env = os.environ.get("FERRUM_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(available_cores(), 8))


def _cpu_has(*units: str) -> bool:
    """Whether torch's cpuinfo probes ``torch.cpu._is_<unit>_supported`` all answer yes; the names are
    private, so a torch without one counts as a CPU without the unit."""
    import torch

    probes = [getattr(torch.cpu, f"_is_{unit}_supported", None) for unit in units]
    return all(probe is not None and probe() for probe in probes)


def cpu_has_amx_tiles() -> bool:
    """Whether this CPU has Intel AMX tiles (Xeon Sapphire Rapids and later): oneDNN's int8 and bfloat16
    matmuls run on them, fbgemm's int8 GEMM does not."""
    return _cpu_has("amx_tile")


def cpu_multiplies_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (Intel AMX, with AVX-512 BF16 for the
    rest): there a bfloat16 matmul runs several times faster than a float32 or int8 one, elsewhere it is
    emulated and slower."""
    return _cpu_has("amx_tile", "avx512_bf16")


def bfloat16_encoder_requested() -> bool:
    """``FERRUM_CPU_BF16=1``: the Whisper encoder multiplies in bfloat16 on the CPU (opt-in: 2.5x faster
    on AMX, but long files lost WER with it; README "Devices")."""
    return os.environ.get("FERRUM_CPU_BF16", "").strip() == "1"


def bfloat16_attention_wanted() -> bool:
    """Whether the Whisper decoder may keep cross-attention keys and values in bfloat16 on the CPU (where
    ``forward.WhisperRuntime.fast_cross_attention`` asks): where the CPU multiplies bfloat16 in hardware,
    unless ``FERRUM_CPU_BF16=0`` asks for no bfloat16 at all."""
    return os.environ.get("FERRUM_CPU_BF16", "").strip() != "0" and cpu_multiplies_bfloat16()


def fbgemm_only_requested() -> bool:
    """``FERRUM_INT8_KERNEL=fbgemm``: every int8 layer on fbgemm, even where oneDNN's AMX kernel would take
    the window-sized ones (the same results; for measuring one against the other)."""
    return os.environ.get("FERRUM_INT8_KERNEL", "").strip() == "fbgemm"


def available_devices() -> list[str]:
    import torch

    found = ["cpu"]
    if torch.cuda.is_available():
        found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")
    return found


def _parse(spec: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"(auto|cpu|mps|cuda)(?::(\d+))?", spec.strip().lower())
    if not m:
        raise InvalidParameterError(f"Unknown device '{spec}'", "use auto, cpu, cuda, cuda:N or mps")
    return m.group(1), int(m.group(2)) if m.group(2) is not None else None


def resolve_device(spec: str = "auto", dtype: str = "auto", threads: int | None = None) -> DeviceChoice:
    """Turn user settings into a concrete device; an absent device is an error unless ``auto``."""
    import torch

    kind, index = _parse(spec or "auto")
    if kind == "auto":
        if torch.cuda.is_available():
            kind, index = "cuda", 0
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            kind = "mps"
        else:
            kind = "cpu"
    elif kind == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError("CUDA was requested but no CUDA GPU is available",
                              "choose device 'auto' or 'cpu', or install a CUDA build of torch")
        index = index or 0
        if index >= torch.cuda.device_count():
            raise DeviceError(f"cuda:{index} does not exist ({torch.cuda.device_count()} GPU(s) found)",
                              "pick a GPU index that exists, or 'auto'")
    elif kind == "mps":
        if not (getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()):
            raise DeviceError("Apple MPS was requested but is not available on this machine",
                              "choose device 'auto' or 'cpu'")
    n_threads = threads if threads and threads > 0 else default_threads()
    choice = DeviceChoice(kind, index if kind == "cuda" else None, _resolve_dtype(kind, dtype), n_threads)
    apply_threads(n_threads)
    return choice


def auto_dtype(kind: str) -> str:
    """The dtype "auto" gives on a device kind ("cpu", "cuda", "mps"): float32 on the CPU, else float16."""
    return "float32" if kind == "cpu" else "float16"


def _resolve_dtype(kind: str, dtype: str) -> str:
    import torch

    dtype = (dtype or "auto").lower()
    if dtype == "auto":
        return auto_dtype(kind)
    if dtype not in _DTYPES:
        raise InvalidParameterError(f"Unknown dtype '{dtype}'", "use auto, float32, float16 or bfloat16")
    name = _DTYPES[dtype]
    if name == "bfloat16" and kind == "cuda" and not torch.cuda.is_bf16_supported():
        raise DeviceError("This GPU does not support bfloat16", "use float16 or auto")
    if name == "float16" and kind == "cpu":
        raise InvalidParameterError("float16 is not supported on the CPU", "use float32 (or bfloat16)")
    return name


def apply_threads(threads: int) -> None:
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
