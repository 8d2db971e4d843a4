"""``ferrum index PATH...`` and ``ferrum search QUERY``: the persistent semantic search index.

Search ranks the same way as the app's Search panel: without ``--collection`` every collection of the
embedding model is searched, ranked as one ("Everything").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--collection", "-c", default=None,
                        help="collection name (index: default 'default'; search: default every collection)")
    common.add_argument("--db", type=Path, default=None, help="index database (default: search.db in the data folder)")
    common.add_argument("--model", "-m", default=None,
                        help="embedding model: all-MiniLM-L6-v2 (default; for search, the collection's model)")
    common.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    common.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core, up to 8)")

    p = subparsers.add_parser("index", parents=[common], help="index text, Markdown, PDF and transcript files",
                              description="Add files and folders to the search index. Unchanged files are "
                                          "skipped, changed ones re-embedded, deleted ones removed.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (.txt .md .pdf .json .srt .vtt)")
    p.add_argument("--transcripts", action="store_true",
                   help="also index every transcript in the history (into the 'transcripts' collection)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run_index)

    p = subparsers.add_parser("search", parents=[common], help="search the index",
                              description="Find the chunks of indexed documents closest in meaning to QUERY.")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("-k", type=int, default=10, help="number of hits (default: 10)")
    p.add_argument("--hybrid", action="store_true", help="fuse with keyword (BM25) search")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.set_defaults(func=run_search)


class _Bars:
    """Two tqdm bars on stderr: files overall, chunks of the file being embedded."""

    def __init__(self, quiet: bool):
        from tqdm import tqdm

        self._files = tqdm(desc="files", unit="file", file=sys.stderr, disable=quiet, position=0)
        self._chunks = tqdm(desc="chunks", unit="chunk", file=sys.stderr, disable=quiet, position=1, leave=False)

    def __call__(self, progress) -> None:
        bar = self._chunks if progress.unit == "chunks" else self._files
        bar.total = int(progress.total)
        bar.n = int(progress.done)
        bar.set_postfix_str(Path(progress.message).name, refresh=False)
        bar.refresh()

    def close(self) -> None:
        self._chunks.close()
        self._files.close()


def run_index(args) -> int:
    from executors.core.errors import InvalidParameterError
    from executors.service import EMBEDDING, FILES, TRANSCRIPTS
    from executors.service.events import JobProgress

    from .engine import load, open_engine, wait_for
    from .quick_search import prepare_quick_search

    if not args.paths and not args.transcripts:
        raise InvalidParameterError("Nothing to index", "give files or folders, or --transcripts")
    report = transcripts = None
    with open_engine(args, embedding_model=args.model, search_db=args.db) as engine:
        load(engine, EMBEDDING, args.quiet)
        model_ref = engine.settings.embedding_model
        bars = _Bars(args.quiet)
        stop = engine.subscribe(lambda e: bars(e.progress) if isinstance(e, JobProgress) else None)
        try:
            if args.paths:
                report = wait_for(engine.search.index_paths(args.paths, args.collection or FILES))
            if args.transcripts:
                transcripts = wait_for(engine.search.index_transcripts())
            indexed = ([args.collection or FILES] if args.paths else []) + ([TRANSCRIPTS] if args.transcripts else [])
            engine.search.load_matrices(indexed).result()  # saved on close, for ferrum search
        finally:
            stop()
            bars.close()
    if report is not None:
        print(f"{report.counts_text()} in {report.seconds:.1f} s")
        if report.unsupported:
            print(f"ferrum: {report.unsupported_text()}", file=sys.stderr)
        if report.nothing_found() and not report.errors:
            print("ferrum: nothing to index: no file in these paths can be indexed", file=sys.stderr)
    if transcripts is not None:
        print(f"{transcripts.files_added + transcripts.files_updated + transcripts.files_skipped} transcripts "
              f"searchable; {transcripts.chunks_embedded} chunks embedded")
    errors = [e for r in (report, transcripts) if r is not None for e in r.errors]
    for path, message in errors:
        print(f"ferrum: skipped {path}: {message}", file=sys.stderr)
    note = prepare_quick_search(args, model_ref)
    if note:
        print(f"ferrum: {note}", file=sys.stderr)
    return 1 if errors else 0


def _where(hit) -> str:
    if hit.start_time is not None:
        return f"{hit.start_time:.1f}-{hit.end_time:.1f} s"
    return f"chars {hit.char_start}-{hit.char_end}"


def run_search(args) -> int:
    from .quick_search import prepare_quick_search, quick_hits

    hits = quick_hits(args)
    if hits is None:
        hits, model_ref = _engine_search(args)
        note = prepare_quick_search(args, model_ref)
        if note:
            print(f"ferrum: searched through torch; {note}", file=sys.stderr)
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


def _engine_search(args) -> tuple[list, str]:
    """The hits through the engine service (torch), and the embedding model they came from."""
    from executors.service import EMBEDDING

    from .engine import load, open_engine

    with open_engine(args, embedding_model=args.model, search_db=args.db) as engine:
        if args.model is None and args.collection is not None:  # the collection's own model
            known = {c.name: c for c in engine.search.collections().result()}
            if args.collection in known:
                engine.apply(engine.settings.with_changes(embedding_model=known[args.collection].model_id))
        load(engine, EMBEDDING, quiet=True)
        collections = None if args.collection is None else [args.collection]
        hits = engine.search.search(args.query, k=args.k, hybrid=args.hybrid, collections=collections).result()
        return hits, engine.settings.embedding_model
