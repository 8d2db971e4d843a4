"""Incremental indexing of files, folders, pasted text and transcripts into a ``SearchStore``.

A file is skipped when its mtime and size match the index (fast path) or, failing that, when
its content hash does; changed files are re-embedded and files gone from an indexed folder are
removed. Each document is written in one transaction after all its chunks are embedded, so
cancelling (``CancelToken``, checked between embedding batches) never leaves half a document.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from ..errors import Cancelled, FerrumError, InvalidFormatError, NotFoundError, wrap_unexpected
from ..types import CancelToken, Progress
from .chunking import TimedText, chunk_segments, chunk_text
from .extract import extract, is_supported, transcript_segments
from .store import SearchStore
from .types import Chunk, ChunkOptions, Collection, DocKind, Embedder, IndexReport

EMBED_BATCH = 32
ProgressCallback = Callable[[Progress], None]


def _open_collection(store: SearchStore, embedder: Embedder, name: str) -> Collection:
    dim = getattr(embedder, "embedding_dim", None) or int(np.asarray(embedder.embed(["dimension probe"])).shape[-1])
    return store.collection(name, model_id=embedder.model_id, dim=int(dim))


def _cancelled(report: IndexReport, started: float) -> Cancelled:
    report.seconds = time.perf_counter() - started
    exc = Cancelled("Indexing was cancelled; documents finished before that are kept",
                    "run the indexing again to pick up the rest (finished files are skipped)")
    exc.partial = report
    return exc


def _embed_chunks(embedder: Embedder, chunks: Sequence[Chunk], label: str, on_progress: ProgressCallback | None,
                  cancel: CancelToken | None) -> np.ndarray:
    """Embed in batches, reporting Progress(chunks done, chunks total, "chunks") after each."""
    parts = []
    for i in range(0, len(chunks), EMBED_BATCH):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        parts.append(np.asarray(embedder.embed([c.text for c in chunks[i:i + EMBED_BATCH]]), dtype=np.float32))
        if on_progress is not None:
            on_progress(Progress(min(i + EMBED_BATCH, len(chunks)), len(chunks), "chunks", label))
    if cancel is not None and cancel.cancelled:
        raise Cancelled("cancelled")
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def _walk(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[Path]]:
    """(supported files to index, roots whose missing documents should be removed)."""
    files: dict[Path, None] = {}
    roots: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser().absolute()
        roots.append(path)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    f = Path(dirpath) / name
                    if not name.startswith(".") and is_supported(f):
                        files.setdefault(f, None)
        elif path.is_file():
            files.setdefault(path, None)
    return list(files), roots


def _under(source: str, root: Path) -> bool:
    return source == str(root) or source.startswith(str(root).rstrip(os.sep) + os.sep)


def index_paths(store: SearchStore, embedder: Embedder, paths: Iterable[str | os.PathLike],
                collection: str = "default", on_progress: ProgressCallback | None = None,
                cancel: CancelToken | None = None, options: ChunkOptions | None = None) -> IndexReport:
    """Bring ``collection`` up to date with the files and folders in ``paths``.

    ``on_progress`` gets Progress(files done, files total, "files", path) after each file and
    Progress(chunks done, chunks total, "chunks", path) while a file is embedded. Files that
    cannot be read are listed in ``report.errors`` and the run goes on. Cancelling raises
    ``Cancelled`` whose ``.partial`` is the report so far."""
    started = time.perf_counter()
    report = IndexReport()
    coll = _open_collection(store, embedder, collection)
    files, roots = _walk(paths)
    wanted = {str(f) for f in files}
    file_kinds = (DocKind.FILE, DocKind.TRANSCRIPT)
    indexed = [d for d in store.documents(coll) if d.kind in file_kinds and not d.source.startswith("history:")]
    for root in roots:
        if not root.exists() and not any(_under(d.source, root) for d in indexed):
            raise NotFoundError(f"{root} does not exist", "check the path")
    for doc in indexed:
        if doc.source not in wanted and any(_under(doc.source, r) for r in roots) and not Path(doc.source).is_file():
            store.remove_document(coll, doc.source)
            report.files_removed += 1
    known = {d.source: d for d in indexed}
    for done, path in enumerate(files):
        if cancel is not None and cancel.cancelled:
            raise _cancelled(report, started)
        try:
            _index_file(store, embedder, coll, path, known.get(str(path)), report, on_progress, cancel, options)
        except Cancelled:
            raise _cancelled(report, started) from None
        except (FerrumError, OSError) as exc:
            err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"reading {path}")
            report.errors.append((str(path), str(err)))
        if on_progress is not None:
            on_progress(Progress(done + 1, len(files), "files", str(path)))
    report.seconds = time.perf_counter() - started
    return report


def _index_file(store: SearchStore, embedder: Embedder, coll: Collection, path: Path, known, report: IndexReport,
                on_progress: ProgressCallback | None, cancel: CancelToken | None, options: ChunkOptions | None) -> None:
    stat = path.stat()
    if known is not None and known.mtime == stat.st_mtime and known.size == stat.st_size:
        report.files_skipped += 1
        return
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if known is not None and known.content_hash == digest:
        store.touch_document(known, stat.st_mtime, stat.st_size)
        report.files_skipped += 1
        return
    content = extract(path, data)
    if content.segments is not None:
        _, chunks = chunk_segments(content.segments, embedder, options)
    else:
        chunks = chunk_text(content.text, embedder, options)
    vectors = _embed_chunks(embedder, chunks, str(path), on_progress, cancel)
    store.put_document(coll, content.kind, str(path), digest, chunks, vectors, title=content.title,
                       mtime=stat.st_mtime, size=stat.st_size)
    report.chunks_embedded += len(chunks)
    if known is None:
        report.files_added += 1
    else:
        report.files_updated += 1


def _put_unless_same(store: SearchStore, embedder: Embedder, coll: Collection, kind: DocKind, source: str,
                     digest: str, title: str, make_chunks: Callable[[], list[Chunk]],
                     cancel: CancelToken | None) -> IndexReport:
    started = time.perf_counter()
    report = IndexReport()
    known = store.document(coll, source)
    if known is not None and known.content_hash == digest:
        report.files_skipped = 1
        return report
    chunks = make_chunks()
    try:
        vectors = _embed_chunks(embedder, chunks, source, None, cancel)
    except Cancelled:
        raise _cancelled(report, started) from None
    store.put_document(coll, kind, source, digest, chunks, vectors, title=title)
    report.chunks_embedded = len(chunks)
    report.files_added, report.files_updated = (1, 0) if known is None else (0, 1)
    report.seconds = time.perf_counter() - started
    return report


def index_text(store: SearchStore, embedder: Embedder, text: str, collection: str = "default",
               source: str | None = None, title: str = "", options: ChunkOptions | None = None,
               cancel: CancelToken | None = None) -> IndexReport:
    """Index pasted text as one document (``source`` defaults to ``text:<hash>``; same source replaces)."""
    if not text.strip():
        raise InvalidFormatError("There is no text to index", "paste some text first")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    coll = _open_collection(store, embedder, collection)
    title = title or text.strip().splitlines()[0][:80]
    return _put_unless_same(store, embedder, coll, DocKind.TEXT, source or f"text:{digest[:16]}", digest, title,
                            lambda: chunk_text(text, embedder, options), cancel)


def index_transcript(store: SearchStore, embedder: Embedder, record, collection: str = "transcripts",
                     options: ChunkOptions | None = None, cancel: CancelToken | None = None) -> IndexReport:
    """Index a transcript history record (anything with ``.id``, ``.source`` and ``.transcript``)
    or a bare ``Transcript``; chunks keep their segments' start/end times and ids. The document's
    source is ``history:<id>`` for a record, so re-indexing an edited record replaces it."""
    transcript = getattr(record, "transcript", record)
    if transcript is None or not getattr(transcript, "segments", None):
        raise InvalidFormatError("The transcript has no segments to index", "transcribe something first")
    segments: list[TimedText] = transcript_segments(transcript)
    digest = hashlib.sha256(json.dumps([(s.id, s.start, s.end, s.text) for s in segments]).encode()).hexdigest()
    record_id = getattr(record, "id", None)
    source = f"history:{record_id}" if record_id is not None else f"transcript:{digest[:16]}"
    title = str(getattr(record, "source", "") or getattr(record, "name", "") or source)
    coll = _open_collection(store, embedder, collection)
    return _put_unless_same(store, embedder, coll, DocKind.TRANSCRIPT, source, digest, title,
                            lambda: chunk_segments(segments, embedder, options)[1], cancel)
