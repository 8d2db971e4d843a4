"""API throughput and latency, side by side with the same executors called directly (the peer).

A real ApiServer runs in this process on a free loopback port; clients use the official ``openai``
package from threads. Per round, interleaved: direct calls, then 1 client, then 8 concurrent clients,
for embeddings (a batch of 16 short texts per request, embedding cache off, the client's default
base64 encoding) and for transcription of a 5 s dev clip. Prints median requests/s and p50/p95
latency over the rounds, and the ratio of each API figure to the direct calls of the same round.

    python bench/api.py --rounds 3 --threads 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
CLIP = EVAL / "speech-dev" / "pocketsphinx" / "librivox_sense_and_sensibility_01_austen_64kb-0890.flac"  # 5.3 s
TOKEN = "bench-token"


def _texts() -> list[str]:
    lines = (EVAL / "text-dev" / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["subject"] for line in lines]


def _timed(calls: list, clients: int) -> tuple[float, list[float]]:
    """Run the zero-argument ``calls`` with ``clients`` threads: (requests/s, latencies)."""
    def one(call):
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(one, calls))
    return len(calls) / (time.perf_counter() - start), latencies


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each executor")
    parser.add_argument("--embed-requests", type=int, default=16, help="requests per setting and round")
    parser.add_argument("--audio-requests", type=int, default=8, help="requests per setting and round")
    args = parser.parse_args()

    import openai

    from executors.bert.executor import BertModelExecutor
    from executors.models.store import resolve_model
    from executors.service import EngineService
    from executors.whisper.executor import WhisperModelExecutor
    from ferrum_api.server import ApiConfig, ApiServer

    whisper = WhisperModelExecutor.from_path(resolve_model("whisper-tiny.en", kind="whisper").path, device="cpu",
                                             threads=args.threads, model_id="whisper-tiny.en")
    embedder = BertModelExecutor.load("all-MiniLM-L6-v2", device="cpu", threads=args.threads, cache_bytes=0)
    service = EngineService(executors={"whisper": whisper, "embedding": embedder})
    server = ApiServer(service, ApiConfig(port=0, token=TOKEN, save_history=False))  # (not the user's history)
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    url = asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
    client = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0, timeout=600)
    audio = CLIP.read_bytes()
    texts = _texts()

    def batches(n: int, offset: int) -> list[list[str]]:
        return [[texts[(offset + i * 16 + j) % len(texts)] for j in range(16)] for i in range(n)]

    def api_embed(batch):
        return lambda: client.embeddings.create(model=embedder.model_id, input=batch)

    def api_audio():
        return client.audio.transcriptions.create(model="whisper-1", file=("clip.flac", audio))

    settings = {
        "embeddings": {
            "direct": (lambda r: [lambda b=b: embedder.embed(b) for b in batches(args.embed_requests, r)], 1),
            "api 1 client": (lambda r: [api_embed(b) for b in batches(args.embed_requests, r + 7)], 1),
            "api 8 clients": (lambda r: [api_embed(b) for b in batches(args.embed_requests, r + 13)], 8),
        },
        "transcription 5 s": {
            "direct": (lambda r: [lambda: whisper.transcribe(audio)] * args.audio_requests, 1),
            "api 1 client": (lambda r: [api_audio] * args.audio_requests, 1),
            "api 8 clients": (lambda r: [api_audio] * args.audio_requests, 8),
        },
    }
    api_embed(batches(1, 0)[0])()  # warm up both paths once
    api_audio()
    results = {(w, s): [] for w, group in settings.items() for s in group}
    for r in range(args.rounds):
        for workload, group in settings.items():
            for name, (make, clients) in group.items():
                results[(workload, name)].append(_timed(make(r), clients))
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(60)
    service.close()

    print(f"{args.rounds} rounds, torch threads {args.threads}, medians over rounds; ratio = API / direct")
    print(f"{'workload':18} {'setting':14} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'req/s ratio':>12} {'p50 ratio':>10}")
    for workload, group in settings.items():
        base_rps = statistics.median(rps for rps, _ in results[(workload, "direct")])
        base_p50 = statistics.median(_p(lat, 50) for _, lat in results[(workload, "direct")])
        for name in group:
            rows = results[(workload, name)]
            rps = statistics.median(x for x, _ in rows)
            p50 = statistics.median(_p(lat, 50) for _, lat in rows)
            p95 = statistics.median(_p(lat, 95) for _, lat in rows)
            print(f"{workload:18} {name:14} {rps:8.2f} {p50 * 1e3:8.1f} {p95 * 1e3:8.1f} "
                  f"{rps / base_rps:12.2f} {p50 / base_p50:10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
