import pytest
import torch

from executors.core import device
from executors.core.errors import DeviceError, InvalidParameterError


def test_auto_resolves_to_an_available_device_with_its_default_dtype():
    choice = device.resolve_device("auto")
    assert choice.name in device.available_devices()
    assert choice.dtype_name == ("float32" if choice.kind == "cpu" else "float16")
    assert choice.torch_dtype is getattr(torch, choice.dtype_name)


def test_default_threads_never_exceed_the_cores_we_may_use(monkeypatch):
    monkeypatch.delenv("FERRUM_THREADS", raising=False)
    assert 1 <= device.default_threads() <= device.available_cores()
    monkeypatch.setenv("FERRUM_THREADS", "1")
    assert device.default_threads() == 1


def test_threads_are_applied_to_torch():
    before = torch.get_num_threads()
    try:
        device.resolve_device("cpu", threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_absent_cuda_is_a_clear_device_error_not_a_fallback():
    with pytest.raises(DeviceError) as info:
        device.resolve_device("cuda:0")
    assert "CUDA" in str(info.value) and info.value.hint


def test_bad_specs_are_invalid_parameters():
    with pytest.raises(InvalidParameterError):
        device.resolve_device("tpu")
    with pytest.raises(InvalidParameterError):
        device.resolve_device("cpu", dtype="int3")
    with pytest.raises(InvalidParameterError):
        device.resolve_device("cpu", dtype="float16")


def test_bfloat16_on_request_on_cpu():
    assert device.resolve_device("cpu", dtype="bf16").dtype_name == "bfloat16"
