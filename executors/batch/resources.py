"""How many workers a batch run asks Ray for, and what each reserves (Ray's logical CPUs/GPUs).

On GPUs: one transcription worker per GPU, fed by decoding tasks on the node's CPUs. On CPUs: by
default one single-thread worker per core (at most 16 per node; bigger nodes give each worker more
threads), each decoding its own files. Independent workers keep every core busy on its own file;
one worker spread over all cores waits, at every parallel step of the model, for the thread that
Ray's own processes held up (on 2 cores: 2 workers × 1 thread wrote 40 files in 37 s where
1 worker × 2 threads took 47 s). A separate decoding task could only run on cores the workers
already use. The workers together reserve a node's CPUs less half a CPU, which is left for the
embedding worker, so no stage can starve another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .cluster import ClusterInfo
from .options import BatchOptions

DECODE_CPUS = 0.25       # a decoding task beside a GPU worker: short, mostly file reading and resampling
EMBED_CPUS = 0.25        # the embedding worker: small model, short texts
RESERVED_PER_NODE = 0.5  # what transcription workers leave free on each node
MAX_CPU_WORKERS_PER_NODE = 16  # each worker holds the model once: memory, not cores, is the limit beyond


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
    per_node = max(1, int(info.cpus // nodes))
    if options.threads:
        threads = options.threads
        per_node_workers = max(1, per_node // threads)
    else:
        per_node_workers = min(per_node, MAX_CPU_WORKERS_PER_NODE)
        threads = max(1, per_node // per_node_workers)
    workers = options.workers or nodes * per_node_workers
    share = max(0.1, (info.cpus - RESERVED_PER_NODE * nodes) / workers)
    cpus = math.floor(share * 100) / 100  # rounded down, so the workers never take the embedder's share
    device = "cpu" if options.device == "auto" else options.device
    return Resources(workers, threads, device, cpus, 0.0, decoders=0)
