"""torch as it will be once its quantised tensors and private int8 operators are gone.

Python runs this file at start-up (``sitecustomize``) in a process whose PYTHONPATH begins with this
folder (``tests/test_int8_fallback.py`` starts the real CLI and service that way). Every function and
operator the int8 paths use raises, as a removed operator does."""

import torch

FUNCTIONS = ("quantize_per_tensor", "quantize_per_channel", "_make_per_tensor_quantized_tensor",
             "_make_per_channel_quantized_tensor", "_int_mm", "_weight_int8pack_mm")
OPERATORS = {"quantized": ("linear_prepack", "linear_dynamic", "linear_unpack"),
             "aten": ("_int_mm", "_weight_int8pack_mm")}


def _removed(name: str):
    def call(*args, **kwargs):
        raise RuntimeError(f"{name} was removed from this torch")

    return call


for _name in FUNCTIONS:
    setattr(torch, _name, _removed(f"torch.{_name}"))
for _namespace, _names in OPERATORS.items():
    for _name in _names:
        setattr(getattr(torch.ops, _namespace), _name, _removed(f"{_namespace}::{_name}"))
