"""Embedding throughput: our BertModelExecutor (fp32 and int8) against sentence-transformers.

All three embed the same texts (the newsgroups set split into subjects, sentences and
paragraphs) in one process, interleaved round by round with the same torch thread count; the
embedding cache is off. Prints the median texts/s of each, the ratios to the peer, and the
int8 fidelity (cosine to our fp32 rows).

    python bench/embed.py --threads 1 --rounds 3 --limit 600
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.eval_data import eval_path  # noqa: E402


def load_texts(path: Path, limit: int | None) -> list[str]:
    texts: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        post = json.loads(line)
        texts.append(post["subject"])
        for para in re.split(r"\n\s*\n", post["body"]):
            para = " ".join(para.split())
            if not para:
                continue
            texts.append(para)
            texts.extend(s for s in re.split(r"(?<=[.!?])\s+", para) if len(s) > 1)
    return texts[:limit] if limit else texts


def model_folder(ref: str | None) -> str:
    from executors.models.store import DEFAULT_EMBEDDING, resolve_model

    return str(resolve_model(ref or DEFAULT_EMBEDDING, kind="embedding").path)


def cosine_rows(a, b):
    import numpy as np

    a = a / np.linalg.norm(a, axis=1, keepdims=True).clip(1e-12)
    b = b / np.linalg.norm(b, axis=1, keepdims=True).clip(1e-12)
    return (a * b).sum(axis=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="newsgroups JSONL (default: text-dev of the evaluation sets, FERRUM_EVAL_DIR)")
    parser.add_argument("--model", help="model folder (default: bundled all-MiniLM-L6-v2)")
    # 1 by default: on a shared machine a multi-thread OpenMP team waits on descheduled threads
    # at every op, which swamps what is measured; pass --threads N on an idle machine
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N texts")
    parser.add_argument("--st-batch-size", type=int, default=32, help="sentence-transformers batch size")
    parser.add_argument("--token-budget", type=int, default=None, help="our tokens per batch (default: executor's)")
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from executors.bert import BertModelExecutor

    texts = load_texts(args.data or eval_path("text-dev", "newsgroups_mini.jsonl"), args.limit)
    folder = model_folder(args.model)
    ours = BertModelExecutor.load(folder, device="cpu", threads=args.threads, cache_bytes=0,
                                  token_budget=args.token_budget)
    ours_int8 = BertModelExecutor.load(folder, device="cpu", threads=args.threads, cache_bytes=0,
                                       quantize=True, token_budget=args.token_budget)
    peer = SentenceTransformer(folder, device="cpu", model_kwargs={"dtype": torch.float32})
    torch.set_num_threads(args.threads)

    runners = {
        "sentence-transformers": lambda: peer.encode(texts, batch_size=args.st_batch_size, convert_to_numpy=True),
        "ferrum fp32": lambda: ours.embed(texts, use_cache=False),
        "ferrum int8": lambda: ours_int8.embed(texts, use_cache=False),
    }
    for run in runners.values():  # warm-up: first calls pay one-off allocations
        run()
    timings: dict[str, list[float]] = {name: [] for name in runners}
    cpu_times: dict[str, list[float]] = {name: [] for name in runners}
    outputs = {}
    names = list(runners)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:  # rotate who goes first
            start, cpu_start = time.perf_counter(), time.process_time()
            outputs[name] = runners[name]()
            timings[name].append(time.perf_counter() - start)
            cpu_times[name].append(time.process_time() - cpu_start)

    n_tokens = sum(ours.count_tokens(t) for t in texts)
    print(f"texts: {len(texts)} ({n_tokens} tokens untruncated), threads: {args.threads}, "
          f"rounds: {args.rounds}, torch {torch.__version__}")
    peer_rate = len(texts) / statistics.median(timings["sentence-transformers"])
    # CPU seconds are printed too: on a shared machine they vary less than wall time
    peer_cpu = statistics.median(cpu_times["sentence-transformers"])
    print(f"{'runner':<24}{'median s':>10}{'texts/s':>10}{'vs peer':>9}{'cpu s':>9}{'vs peer (cpu)':>15}")
    for name in names:
        med = statistics.median(timings[name])
        rate = len(texts) / med
        cpu = statistics.median(cpu_times[name])
        print(f"{name:<24}{med:>10.3f}{rate:>10.1f}{rate / peer_rate:>8.2f}x{cpu:>9.2f}{peer_cpu / cpu:>14.2f}x")
    fp32_vs_peer = cosine_rows(outputs["ferrum fp32"], outputs["sentence-transformers"])
    int8_vs_fp32 = cosine_rows(outputs["ferrum int8"], outputs["ferrum fp32"])
    print(f"fp32 vs sentence-transformers cosine: mean {fp32_vs_peer.mean():.6f}, min {fp32_vs_peer.min():.6f}")
    print(f"int8 vs fp32 cosine: mean {int8_vs_fp32.mean():.5f}, min {int8_vs_fp32.min():.5f}")
    m = ours.metrics()
    print(f"ferrum batches per run: {m.batches // (args.rounds + 1)}, truncated texts per run: "
          f"{m.truncated_texts // (args.rounds + 1)}, padding overhead: {m.padded_tokens / max(1, m.tokens) - 1:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
