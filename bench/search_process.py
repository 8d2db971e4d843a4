"""Whole-process ``ferrum search`` (launch to JSON printed) next to sentence-transformers' import + load +
encode of one query, each a fresh process, interleaved, medians.

The index: the first 50 posts of tests/data/text/newsgroups_mini.jsonl as .txt files, indexed by
``ferrum index`` into a throw-away data and model-cache folder. Indexing makes the ONNX copy of the model
that searches run; it is deleted once so that one search runs as without it (through torch, then making
the copy again; timed once, on its own row). Then each query runs once per engine; every query names the
post it is about, and the row says how many top hits were it.

    python bench/search.py --process               # 7 queries, 1 thread
    python bench/search_process.py --threads 2 --reps 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import format_table, interleaved, median  # noqa: E402

POSTS = ROOT / "tests" / "data" / "text" / "newsgroups_mini.jsonl"
QUERIES = {  # query -> the post it is about
    "space calendar of upcoming launches": "p001.txt",
    "Hubble telescope servicing mission": "p004.txt",
    "gamma ray bursts": "p012.txt",
    "Jehovah's Witnesses visit": "p030.txt",
    "amateur rocket building": "p033.txt",
    "Kuiper belt object discovered": "p044.txt",
    "dating of the gospels": "p046.txt",
}
PEER = ("import sys, torch\ntorch.set_num_threads(int(sys.argv[3]))\n"
        "from sentence_transformers import SentenceTransformer\n"
        "SentenceTransformer(sys.argv[1], device='cpu').encode([sys.argv[2]])\n")


def _index(work: Path, env: dict, threads: int) -> Path:
    docs = work / "docs"
    docs.mkdir()
    for i, line in enumerate(POSTS.read_text(encoding="utf-8").splitlines()[:50]):
        post = json.loads(line)
        (docs / f"p{i:03d}.txt").write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
    db = work / "search.db"
    subprocess.run([sys.executable, "-m", "ferrum_cli.main", "index", str(docs), "--db", str(db), "-q",
                    "--threads", str(threads)], check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    return db


def _search(db: Path, query: str, env: dict, threads: int) -> tuple[str, str]:
    """The top hit's file name, and what the process said on stderr."""
    done = subprocess.run([sys.executable, "-m", "ferrum_cli.main", "search", query, "--db", str(db), "--json",
                           "--threads", str(threads)], check=True, cwd=ROOT, env=env, capture_output=True, text=True)
    return Path(json.loads(done.stdout)[0]["source"]).name, done.stderr.strip()


def bench_process(threads: int, reps: int) -> None:
    from executors.models.store import resolve_model

    model = str(resolve_model("all-MiniLM-L6-v2", kind="embedding").path)
    with tempfile.TemporaryDirectory(prefix="ferrum-bench-search-process-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "FERRUM_DATA_DIR": str(work / "data"), "FERRUM_CACHE_DIR": str(work / "cache"),
               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        db = _index(work, env, threads)
        shutil.rmtree(work / "cache" / "models" / "onnx")
        query = next(iter(QUERIES))
        start = time.perf_counter()
        _, said = _search(db, query, env, threads)
        without = time.perf_counter() - start
        print(f"a search without the ONNX copy: {without:.2f} s; it said: {said}", flush=True)
        rounds = [q for _ in range(reps) for q in QUERIES]
        ours, peers = iter(rounds), iter(rounds)
        right: list[bool] = []

        def search() -> None:
            query = next(ours)
            top, _ = _search(db, query, env, threads)
            right.append(top == QUERIES[query])

        def peer() -> None:
            subprocess.run([sys.executable, "-c", PEER, model, next(peers), str(threads)], check=True, cwd=ROOT,
                           env=env, capture_output=True)

        times = interleaved({"ferrum search": search, "sentence-transformers": peer}, len(rounds))
    base = median(times["sentence-transformers"])

    def row(name: str, seconds: list[float], note: str = "") -> list[str]:
        spread = f"{min(seconds):.2f}-{max(seconds):.2f}" if len(seconds) > 1 else ""
        return [name, f"{median(seconds):.2f}", spread, f"{median(seconds) / base:.2f}", note]

    rows = [row("ferrum search (ONNX copy present)", times["ferrum search"], f"{sum(right)}/{len(right)}"),
            row("sentence-transformers import+load+encode 1 query (peer)", times["sentence-transformers"]),
            row("ferrum search without the ONNX copy (torch, then the copy made)", [without])]
    print(f"\nWhole process, launch to exit, {len(QUERIES)} queries x {reps} on 50 posts, {threads} thread(s), "
          "interleaved")
    print(format_table(["process", "median s", "range s", "x peer", "right top hit"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--reps", type=int, default=1, help="rounds over the 7 queries")
    args = parser.parse_args()
    bench_process(args.threads, args.reps)


if __name__ == "__main__":
    main()
