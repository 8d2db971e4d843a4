"""Live counters behind ``status()``: operation counts, moving-average latencies, memory."""

from __future__ import annotations

import contextlib
import resource
import sys
import threading
import time

from .types import ExecutorState, ExecutorStatus, MemoryUsage


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

    def __init__(self, device_name: str, parameter_bytes: int):
        self._lock = threading.Lock()
        self.device_name = device_name
        self.parameter_bytes = parameter_bytes
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

    def status(self) -> ExecutorStatus:
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
                memory_usage=memory_usage(self.device_name, self.parameter_bytes),
                last_operation=self.last_operation,
            )


def _process_rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return peak_rss()


def peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _total_ram() -> int:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def memory_usage(device_name: str, parameter_bytes: int) -> MemoryUsage:
    """GPU memory from the allocator on CUDA; on CPU/MPS the process's resident memory."""
    import torch

    if device_name.startswith("cuda"):
        dev = torch.device(device_name)
        allocated = torch.cuda.memory_allocated(dev)
        reserved = torch.cuda.memory_reserved(dev)
        total = torch.cuda.get_device_properties(dev).total_memory
        return MemoryUsage(allocated, reserved, torch.cuda.max_memory_allocated(dev),
                           round(100.0 * reserved / total, 2) if total else 0.0)
    rss = _process_rss()
    total = _total_ram()
    return MemoryUsage(parameter_bytes, rss, peak_rss(), round(100.0 * rss / total, 2) if total else 0.0)


def parameter_bytes(model) -> int:
    return sum(p.numel() * p.element_size() for p in model.parameters()) + sum(
        b.numel() * b.element_size() for b in model.buffers())
