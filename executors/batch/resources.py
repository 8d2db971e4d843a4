"""How many workers a batch run asks Ray for, and what each reserves (Ray's logical CPUs/GPUs).

On GPUs: one transcription worker per GPU, fed by decoding tasks on the node's CPUs. On CPUs: by
default one worker per node using all of its cores (up to 8 threads), which decodes its own files:
a separate decoding task could only run on cores the worker's threads are already using, and on a
2-core machine that contention cost more than the decoding itself. Each CPU worker reserves its
threads less half a CPU, which is left for the embedding worker, so no stage can starve another.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cluster import ClusterInfo
from .options import BatchOptions

DECODE_CPUS = 0.25       # a decoding task beside a GPU worker: short, mostly file reading and resampling
EMBED_CPUS = 0.25        # the embedding worker: small model, short texts
RESERVED_PER_NODE = 0.5  # what transcription workers leave free on each node
MAX_THREADS = 8


@dataclass(frozen=True)
class Resources:
    workers: int
    threads: int
    device: str
    worker_cpus: float
    worker_gpus: float
    decoders: int        # decoding tasks in flight at most (0: the workers decode their own files)

    def describe(self) -> str:
        where = f"{self.worker_gpus:g} GPU" if self.worker_gpus else f"{self.threads} threads"
        return f"{self.workers} transcription worker{'s' if self.workers != 1 else ''} × {where}"


def plan_resources(info: ClusterInfo, options: BatchOptions) -> Resources:
    nodes = max(1, info.nodes)
    use_gpu = info.gpus >= 1 and options.device in ("auto", "cuda")
    if use_gpu:
        workers = options.workers or int(info.gpus)
        return Resources(workers, options.threads or 1, "cuda", 1.0, 1.0, decoders=2 * nodes)
    per_node = max(1.0, info.cpus / nodes)
    threads = options.threads or int(min(MAX_THREADS, per_node))
    cpus = max(0.5, min(threads, per_node) - RESERVED_PER_NODE)
    workers = options.workers or nodes * max(1, int((per_node - RESERVED_PER_NODE) // cpus))
    cpus = min(cpus, max(0.1, (info.cpus - RESERVED_PER_NODE * nodes) / workers))
    device = "cpu" if options.device == "auto" else options.device
    return Resources(workers, threads, device, round(cpus, 2), 0.0, decoders=0)
