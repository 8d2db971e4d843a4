"""int8 weights for CPU inference: the model's ``nn.Linear`` layers become ``RowInt8Linear``.

What the code does (``int8_linear``): weights are symmetric int8 with one scale per output channel
(per row of the weight, as CTranslate2's int8); activations are quantised on the fly with one
range per row (per token), and fbgemm's int8 GEMM accumulates in int32.  torch's own
``quantize_dynamic`` was not used: its default weights are per tensor, and even with per-channel
weights it quantises a whole input with one range (the 1,500 rows of an encoder window share the
loudest row's range; batched decoder rows change each other's results).  A decoder step's one-token
rows are the exception (``projections.token_step``): a single row quantised over its own range by
fbgemm's dynamic linear is already per row, and costs one kernel call.

Which layers are int8 is a per-group choice (``GROUPS``), made by measurement with
``bench/transcribe.py`` (WER per dev subset next to our float32, and time): see ``DEFAULT_GROUPS``.

With ``FERRUM_CPU_BF16=1`` (``device.bfloat16_encoder_requested``) the encoder is not int8: its
convolutions, linears and attention multiply in bfloat16 with float32 sums, its residual stream and layer
norms stay float32 (``bfloat16_matmuls``).  On a CPU with AMX (``device.cpu_multiplies_bfloat16``) a 30 s
window of tiny.en then encodes in 0.11 s instead of 0.28 s at one thread, nearer the float32 encoder's
output than int8's; but on the long file joined from speech-wide it cost 3.6 WER points, sequential and
chunked alike, so it is not the default (README, "Devices").  The decoder stays int8 either way.
"""

from __future__ import annotations

import torch
from torch import nn

from ..core.device import bfloat16_encoder_requested, fbgemm_only_requested
from ..core.errors import InvalidParameterError, UnsupportedError
from ..core.kernels import report
from . import fbgemm, onednn
from .int8_linear import RowInt8Linear

MODES = ("none", "int8", "auto")

# Layer groups that can be int8 on their own: the encoder's linears (attention and MLP) but the last
# MLP output projection, that one, the decoder's attention projections, the decoder's MLP, and the
# vocabulary projection.
GROUPS = ("encoder_first", "encoder", "encoder_last_fc2", "decoder_attention", "decoder_mlp", "vocab")
# Measured per layer (output error of each linear on dev speech, int8 against float32): every layer
# stays within 1-6 % except the encoder's last fc2, at 41 %: its input (after GELU) is near zero
# except a few channels of several hundred, so no per-row int8 range fits it.  It stays float32.
DEFAULT_GROUPS = ("encoder_first", "encoder", "decoder_attention", "decoder_mlp", "vocab")
ENCODER_GROUPS = ("encoder_first", "encoder", "encoder_last_fc2")


def normalise_mode(mode: str | bool | None) -> str:
    if mode is None or mode is False:
        return "none"
    if mode is True:
        return "int8"
    mode = str(mode).lower()
    if mode in ("float32", "fp32", "off"):
        return "none"
    if mode not in MODES:
        raise InvalidParameterError(f"Unknown quantize mode '{mode}'", "use none, int8 or auto")
    return mode


def resolve_mode(mode: str | bool | None, device_kind: str) -> str:
    """``auto`` picks int8 on the CPU (measured faster at equal WER, see bench/transcribe.py) and
    nothing on GPUs, which run float16 instead."""
    mode = normalise_mode(mode)
    if mode == "auto":
        return "int8" if device_kind == "cpu" else "none"
    if mode == "int8" and device_kind != "cpu":
        raise UnsupportedError(f"int8 dynamic quantisation runs only on the CPU, not on {device_kind}",
                               "use quantize=None with float16 on a GPU, or device='cpu'")
    return mode


def layer_group(name: str, encoder_layers: int = 4) -> str | None:
    """The ``GROUPS`` entry of a linear layer by its module name (in a model whose encoder has
    ``encoder_layers`` layers), None for anything else."""
    if name.split(".")[0] == "proj_out":   # "proj_out", or its int8 copy inside ``Int8Head``
        return "vocab"
    if name == f"model.encoder.layers.{encoder_layers - 1}.fc2":
        return "encoder_last_fc2"
    if name.startswith("model.encoder.layers.0."):
        return "encoder_first"
    if name.startswith("model.encoder."):
        return "encoder"
    if name.startswith("model.decoder."):
        return "decoder_mlp" if name.rsplit(".", 1)[-1] in ("fc1", "fc2") else "decoder_attention"
    return None


def takes_many_rows(name: str, encoder_layers: int = 4) -> bool:
    """Whether the linear layer ``name`` multiplies a whole window per call (the encoder's, and the
    cross-attention keys and values the decoder computes once from the encoder's output), not a
    decoder step's one row per window."""
    return (layer_group(name, encoder_layers) in ENCODER_GROUPS
            or name.endswith(("encoder_attn.k_proj", "encoder_attn.v_proj")))


def many_rows_kernel():
    """The int8 GEMM for layers that ``takes_many_rows``: oneDNN's where the CPU has AMX tiles and the
    kernel passes its probe (1.5-1.9x fbgemm's speed there, the same results), the layers' default kernel
    otherwise, where a benchmark gave them another one, or with ``FERRUM_INT8_KERNEL=fbgemm`` (for
    measuring one against the other)."""
    if (not fbgemm_only_requested() and RowInt8Linear.kernel is fbgemm and onednn.wanted()
            and onednn.problem() is None):
        return onednn
    return RowInt8Linear.kernel


def bfloat16_matmuls(encoder: nn.Module) -> None:
    """The encoder's convolution and linear weights become bfloat16, and its forward multiplies in
    bfloat16 (``network.WhisperEncoder.matmul_dtype``)."""
    for module in encoder.modules():
        if isinstance(module, (nn.Linear, nn.Conv1d)):
            module.to(torch.bfloat16)
    encoder.matmul_dtype = torch.bfloat16


def quantize_int8(model, groups: tuple[str, ...] = DEFAULT_GROUPS, *, encoder_bfloat16: bool = False):
    """Quantise the linear layers of ``groups`` in place (float32 CPU model) and return the model;
    with ``encoder_bfloat16`` the encoder multiplies in bfloat16 instead (``bfloat16_matmuls``), whatever
    ``groups`` says of it.

    ``proj_out`` (the vocabulary projection, the largest matmul of every decoder step) gets its own
    int8 copy of the weight it shares with the token embedding, which stays float32 for the
    embedding lookup. That is what CTranslate2's int8 does too. Every int8 layer is built before the
    first one replaces its float layer, so a kernel that fails leaves the model as it was."""
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise InvalidParameterError(f"Unknown int8 layer groups {sorted(unknown)}", f"use some of {GROUPS}")
    if next(model.parameters()).dtype != torch.float32:
        model = model.float()
    depth = model.config.encoder_layers
    if encoder_bfloat16:
        groups = tuple(g for g in groups if g not in ENCODER_GROUPS)
    many_rows = many_rows_kernel()
    built = {name: RowInt8Linear.from_linear(mod, many_rows if takes_many_rows(name, depth) else None,
                                             range_columns=layer_group(name, depth) == "vocab")
             for name, mod in model.named_modules()
             if isinstance(mod, nn.Linear) and layer_group(name, depth) in groups}
    if encoder_bfloat16:
        bfloat16_matmuls(model.model.encoder)
    if not built:
        return model
    tied = getattr(getattr(model, "proj_out", None), "weight", None)
    for name, layer in built.items():
        parent_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, attr, layer)
    if "proj_out" in built and isinstance(tied, torch.Tensor):
        model.proj_out = Int8Head(model.proj_out, tied)
    return model


class Int8Head(nn.Module):
    """The int8 vocabulary projection, still exposing the float ``weight`` it was made from (callers
    read shape, dtype and device from it; the token embedding keeps using it)."""

    def __init__(self, qlinear: nn.Module, weight: torch.Tensor):
        super().__init__()
        self.qlinear = qlinear
        self.weight = weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.qlinear(x)


def quantize_model(model, mode: str | bool | None, device):
    """Apply ``mode`` ('none' | 'int8' | 'auto') for ``device`` (a DeviceChoice or a kind such as
    'cpu'); returns (model, applied mode).

    Raises ``KernelUnavailable`` (the model unchanged, the reason logged once) where the int8 kernel
    is missing from this torch, fails, or answers wrongly: the caller keeps the float weights."""
    applied = resolve_mode(mode, getattr(device, "kind", device))
    if applied != "int8":
        return model, applied
    kernel = RowInt8Linear.kernel
    unavailable = kernel.problem()
    if unavailable is not None:
        raise unavailable
    try:
        model = quantize_int8(model, encoder_bfloat16=bfloat16_encoder_requested())
    except (RuntimeError, NotImplementedError, AttributeError, TypeError) as exc:  # probed fine, failed here
        raise report(kernel.NAME, f"{type(exc).__name__}: {exc}", "loading the float32 weights instead") from exc
    return model, applied


def quantized_layers(model) -> dict[str, RowInt8Linear]:
    """Module name -> int8 layer, for every int8 linear in ``model``."""
    return {name: m for name, m in model.named_modules() if isinstance(m, RowInt8Linear)}


def int8_kernels(model) -> dict[str, str]:
    """Which int8 GEMM the model's layers run on (``ferrum info``): for the layers that take a window per
    call and for the decoder steps' ({} for a float model)."""
    depth = model.config.encoder_layers
    roles: dict[str, set[str]] = {}
    for name, layer in quantized_layers(model).items():
        role = "window layers" if takes_many_rows(name, depth) else "decoder steps"
        kernel = getattr(layer.kernel, "__name__", type(layer.kernel).__name__).rsplit(".", 1)[-1]
        roles.setdefault(role, set()).add(kernel)
    return {role: ", ".join(sorted(kernels)) for role, kernels in roles.items()}


def is_quantized(model) -> bool:
    return any(isinstance(m, RowInt8Linear) for m in model.modules())
