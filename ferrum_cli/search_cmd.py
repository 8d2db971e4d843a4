"""``ferrum index PATH...`` and ``ferrum search QUERY``: the persistent semantic search index."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--collection", "-c", default="default", help="collection name (default: default)")
    common.add_argument("--db", type=Path, default=None, help="index database (default: search.db in the data folder)")
    common.add_argument("--model", "-m", default=None,
                        help="embedding model: all-MiniLM-L6-v2 (default; for search, the collection's model)")
    common.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    common.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core, up to 8)")

    p = subparsers.add_parser("index", parents=[common], help="index text, Markdown, PDF and transcript files",
                              description="Add files and folders to the search index. Unchanged files are "
                                          "skipped, changed ones re-embedded, deleted ones removed.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (.txt .md .pdf .json .srt .vtt)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run_index)

    p = subparsers.add_parser("search", parents=[common], help="search the index",
                              description="Find the chunks of indexed documents closest in meaning to QUERY.")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("-k", type=int, default=10, help="number of hits (default: 10)")
    p.add_argument("--hybrid", action="store_true", help="fuse with keyword (BM25) search")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.set_defaults(func=run_search)


def _embedder(args, model_ref: str | None):
    from executors.bert import BertModelExecutor

    return BertModelExecutor.load(model_ref or "all-MiniLM-L6-v2", device=args.device, threads=args.threads)


class _Bars:
    """Two tqdm bars on stderr: files overall, chunks of the file being embedded."""

    def __init__(self, quiet: bool):
        from tqdm import tqdm

        self._files = tqdm(desc="files", unit="file", file=sys.stderr, disable=quiet, position=0)
        self._chunks = tqdm(desc="chunks", unit="chunk", file=sys.stderr, disable=quiet, position=1, leave=False)

    def __call__(self, progress) -> None:
        bar = self._files if progress.unit == "files" else self._chunks
        bar.total = int(progress.total)
        bar.n = int(progress.done)
        bar.set_postfix_str(Path(progress.message).name, refresh=False)
        bar.refresh()

    def close(self) -> None:
        self._chunks.close()
        self._files.close()


def run_index(args) -> int:
    from executors.search import SearchStore, index_paths

    embedder = _embedder(args, args.model)
    bars = _Bars(args.quiet)
    with SearchStore(args.db) as store:
        try:
            report = index_paths(store, embedder, args.paths, collection=args.collection, on_progress=bars)
        finally:
            bars.close()
    print(f"{report.counts_text()} in {report.seconds:.1f} s")
    if report.unsupported:
        print(f"ferrum: {report.unsupported_text()}", file=sys.stderr)
    if report.nothing_found() and not report.errors:
        print("ferrum: nothing to index: no file in these paths can be indexed", file=sys.stderr)
    for path, message in report.errors:
        print(f"ferrum: skipped {path}: {message}", file=sys.stderr)
    return 1 if report.errors else 0


def _where(hit) -> str:
    if hit.start_time is not None:
        return f"{hit.start_time:.1f}-{hit.end_time:.1f} s"
    return f"chars {hit.char_start}-{hit.char_end}"


def run_search(args) -> int:
    from executors.search import SearchStore, search_text

    with SearchStore(args.db) as store:
        coll = store.collection(args.collection)
        embedder = _embedder(args, args.model or coll.model_id)
        hits = search_text(store, embedder, args.query, collection=args.collection, k=args.k, hybrid=args.hybrid)
    if args.json:
        json.dump([h.to_dict() for h in hits], sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0
    for rank, hit in enumerate(hits, 1):
        snippet = " ".join(hit.text.split())
        print(f"{rank:2d}. {hit.score:.4f}  {hit.title or hit.source}  ({_where(hit)})")
        print(f"    {snippet[:200]}{'...' if len(snippet) > 200 else ''}")
        if hit.matched_terms:
            print(f"    matched: {', '.join(hit.matched_terms)}")
    if not hits:
        print("no hits", file=sys.stderr)
    return 0
