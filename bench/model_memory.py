"""A model's reported memory next to what loading it adds to the process's resident memory.

Each case runs in a fresh subprocess: a first load imports code and fills per-process caches, is
dropped, and the heap's free pages go back to the system; then the resident memory before and after a
second load is compared with ``status().memory_usage.allocated_bytes`` (weights, the kernel's packed
int8 copies, the tokenizer) right after it. ``tests/test_model_memory.py`` holds the two within 15 %.

    python bench/model_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import format_table  # noqa: E402

CASES = {  # name: (kind, model, quantize)
    "whisper-tiny.en, int8 (default)": ("whisper", "whisper-tiny.en", "auto"),
    "whisper-tiny.en, float32": ("whisper", "whisper-tiny.en", None),
    "all-MiniLM-L6-v2, float32 (default)": ("embedding", "all-MiniLM-L6-v2", False),
    "all-MiniLM-L6-v2, int8": ("embedding", "all-MiniLM-L6-v2", True),
}
SCRIPT = """
import gc, json, sys
from executors.core.allocator import release_free_pages
from executors.core.stats import process_rss
from executors.loading import load_executor

kind, ref, quantize = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
executor = load_executor(kind, ref, device="cpu", quantize=quantize)[0]
del executor
gc.collect()
release_free_pages()
before = process_rss()
executor = load_executor(kind, ref, device="cpu", quantize=quantize)[0]
added = process_rss() - before
memory = executor.status().memory_usage
print(json.dumps({"added": added, "reported": memory.allocated_bytes, "weights": memory.parameter_bytes,
                  "tokenizer": memory.tokenizer_bytes, "quantized": executor.info().metadata["quantized"]}))
"""


def measure(kind: str, ref: str, quantize) -> dict:
    """``added`` (resident bytes the second load added), ``reported`` (= ``weights`` + ``tokenizer``), ``quantized``."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, kind, ref, json.dumps(quantize)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {ref} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    rows = []
    for name, case in CASES.items():
        got = measure(*case)
        mib = {key: got[key] / 2**20 for key in ("added", "reported", "weights", "tokenizer")}
        rows.append([name, f"{mib['added']:.1f}", f"{mib['reported']:.1f}", f"{mib['weights']:.1f}",
                     f"{mib['tokenizer']:.1f}", f"{got['reported'] / got['added']:.3f}"])
    print(format_table(["model", "resident MiB added", "reported MiB", "weights", "tokenizer", "reported / added"],
                       rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
