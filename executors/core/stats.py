"""Live counters behind ``status()``: operation counts, moving-average latencies, the model's memory."""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .types import ExecutorState, ExecutorStatus, MemoryUsage


@dataclass
class HeldMemory:
    """What an executor holds beside its weights, read from its own caches and live KV storage."""

    cache_bytes: int = 0
    kv_bytes: int = 0  # allocated
    kv_used_bytes: int = 0  # filled with tokens


class MovingAverage:
    """Exponential moving average; the first sample seeds it so early values are not biased to 0."""

    def __init__(self, alpha: float = 0.2):
        self.alpha = alpha
        self.value = 0.0
        self.count = 0

    def add(self, sample: float) -> None:
        self.value = sample if self.count == 0 else self.alpha * sample + (1 - self.alpha) * self.value
        self.count += 1


class ExecutorStats:
    """Thread-safe bookkeeping shared by every executor."""

    def __init__(self, device_name: str, parameter_bytes: int, held: Callable[[], HeldMemory] | None = None,
                 tokenizer_bytes: int = 0):
        self._lock = threading.Lock()
        self.device_name = device_name
        self.parameter_bytes = parameter_bytes
        self.tokenizer_bytes = tokenizer_bytes
        self._held = held or HeldMemory
        self._peak = parameter_bytes + tokenizer_bytes
        self._device_total: int | None = None
        self.state = ExecutorState.INITIALIZING
        self.prefill_ms = MovingAverage()
        self.decode_ms = MovingAverage()
        self.current_batch_size = 0
        self.last_operation: float | None = None
        self._busy = 0

    def set_state(self, state: ExecutorState) -> None:
        with self._lock:
            self.state = state

    @contextlib.contextmanager
    def operation(self, kind: str, batch_size: int = 1):
        """Time one prefill/decode; marks the executor Busy while it runs."""
        with self._lock:
            self._busy += 1
            self.current_batch_size = batch_size
            if self.state is ExecutorState.READY:
                self.state = ExecutorState.BUSY
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            with self._lock:
                (self.prefill_ms if kind == "prefill" else self.decode_ms).add(elapsed)
                self._busy -= 1
                self.last_operation = time.time()
                if self._busy == 0:
                    self.current_batch_size = 0
                    if self.state is ExecutorState.BUSY:
                        self.state = ExecutorState.READY

    def observe_memory(self) -> MemoryUsage:
        """The model's memory now; also what keeps ``peak_bytes`` (executors call it when they allocate)."""
        held = self._held()
        fixed = self.parameter_bytes + self.tokenizer_bytes
        allocated = fixed + held.cache_bytes + held.kv_bytes
        with self._lock:
            self._peak = max(self._peak, allocated)
            peak = self._peak
        if self._device_total is None:
            self._device_total = device_total_bytes(self.device_name)
        total = self._device_total
        return MemoryUsage(
            allocated_bytes=allocated,
            used_bytes=fixed + held.cache_bytes + held.kv_used_bytes,
            peak_bytes=peak,
            utilization_percent=round(100.0 * allocated / total, 2) if total else 0.0,
            parameter_bytes=self.parameter_bytes, cache_bytes=held.cache_bytes, kv_bytes=held.kv_bytes,
            tokenizer_bytes=self.tokenizer_bytes)

    def status(self) -> ExecutorStatus:
        memory = self.observe_memory()
        with self._lock:
            state = self.state
            return ExecutorStatus(
                state=state,
                is_ready=state in (ExecutorState.READY, ExecutorState.BUSY),
                current_batch_size=self.current_batch_size,
                prefill_operations=self.prefill_ms.count,
                decode_operations=self.decode_ms.count,
                avg_prefill_time_ms=round(self.prefill_ms.value, 3),
                avg_decode_time_ms=round(self.decode_ms.value, 3),
                memory_usage=memory,
                last_operation=self.last_operation,
            )


def process_rss() -> int:
    """Resident memory of the whole process (every model, the app, the interpreter)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return peak_rss()


def peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _total_ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def device_total_bytes(device_name: str) -> int:
    """Memory of the device a model lives on: the GPU's own on CUDA, the machine's RAM otherwise
    (MPS shares it)."""
    if device_name.startswith("cuda"):
        import torch

        return int(torch.cuda.get_device_properties(torch.device(device_name)).total_memory)
    return _total_ram()


def parameter_bytes(model) -> int:
    """Bytes of a model's weights and buffers, each storage once (tied weights), plus what its modules
    hold outside tensors (a kernel's packed weights: a module's ``packed_bytes``)."""
    import torch

    seen: set[int] = set()
    total = 0

    def add(value) -> None:
        nonlocal total
        if isinstance(value, (tuple, list)):
            for item in value:
                add(item)
        elif isinstance(value, torch.Tensor):
            key = value.data_ptr()
            if key not in seen:
                seen.add(key)
                total += value.numel() * value.element_size()

    for value in model.state_dict(keep_vars=True).values():
        add(value)
    add(list(model.buffers()))  # non-persistent buffers too
    return total + sum(getattr(module, "packed_bytes", 0) for module in model.modules())
