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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import (
    Cancelled,
    FerrumError,
    InvalidFormatError,
    NotFoundError,
    wrap_unexpected,
)
from ..core.types import CancelToken, Progress
from .chunking import TimedText, chunk_segments, chunk_text
from .extract import Extracted, extract, is_supported, transcript_segments
from .store import SearchStore
from .transcripts import same_file_entries, transcript_source
from .types import (
    Chunk,
    ChunkOptions,
    Collection,
    DocKind,
    Document,
    Embedder,
    IndexReport,
)

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


def _embed_chunks(embedder: Embedder, chunks: Sequence[Chunk], cancel: CancelToken | None) -> np.ndarray:
    """Embed in batches, checking ``cancel`` between them."""
    parts = []
    for i in range(0, len(chunks), EMBED_BATCH):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("cancelled")
        parts.append(np.asarray(embedder.embed([c.text for c in chunks[i:i + EMBED_BATCH]]), dtype=np.float32))
    if cancel is not None and cancel.cancelled:
        raise Cancelled("cancelled")
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def _walk(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[Path], dict[str, int]]:
    """(supported files to index, roots whose missing documents should be removed, the files of
    folders left out because their type is not indexed, counted per suffix). Hidden files and
    folders are left out without counting."""
    files: dict[Path, None] = {}
    roots: list[Path] = []
    unsupported: dict[str, int] = {}
    for raw in paths:
        path = Path(raw).expanduser().absolute()
        roots.append(path)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    f = Path(dirpath) / name
                    if name.startswith("."):
                        continue
                    if is_supported(f):
                        files.setdefault(f, None)
                    else:
                        suffix = f.suffix.lower() or "(no extension)"
                        unsupported[suffix] = unsupported.get(suffix, 0) + 1
        elif path.is_file():
            files.setdefault(path, None)
    return list(files), roots, unsupported


def _under(source: str, root: Path) -> bool:
    return source == str(root) or source.startswith(str(root).rstrip(os.sep) + os.sep)


def remove_paths(store: SearchStore, collection: str, paths: Iterable[str | os.PathLike]) -> int:
    """Drop the documents of these files and of everything under these folders; returns how many went.
    A collection that does not exist has nothing to drop."""
    if collection not in {c.name for c in store.collections()}:
        return 0
    coll = store.collection(collection)
    roots = [Path(p).expanduser().absolute() for p in paths]  # as index_paths records them
    gone = [d.source for d in store.documents(coll) if any(_under(d.source, r) for r in roots)]
    return sum(bool(store.remove_document(coll, source)) for source in gone)


def index_paths(store: SearchStore, embedder: Embedder, paths: Iterable[str | os.PathLike],
                collection: str = "default", on_progress: ProgressCallback | None = None,
                cancel: CancelToken | None = None, options: ChunkOptions | None = None) -> IndexReport:
    """Bring ``collection`` up to date with the files and folders in ``paths``.

    ``on_progress`` gets Progress(files done, files total, "files", path) after each file and
    Progress(chunks done, chunks total, "chunks", path) after each embedding batch (the chunks
    of the files queued for embedding; ``path`` is the file the batch ended in). Files that
    cannot be read are listed in ``report.errors`` and the run goes on. Cancelling raises
    ``Cancelled`` whose ``.partial`` is the report so far."""
    started = time.perf_counter()
    report = IndexReport()
    coll = _open_collection(store, embedder, collection)
    files, roots, report.unsupported = _walk(paths)
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
    batcher = _Batcher(store, embedder, coll, report, on_progress, cancel, len(files))
    try:
        for path in files:
            if cancel is not None and cancel.cancelled:
                raise Cancelled("cancelled")
            try:
                pending = _prepare_file(store, embedder, path, known.get(str(path)), report, options)
            except (FerrumError, OSError) as exc:
                err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"reading {path}")
                report.errors.append((str(path), str(err)))
                pending = None
            if pending is None:
                batcher.file_done(str(path))
            else:
                batcher.add(pending)
        batcher.flush()
    except Cancelled:
        raise _cancelled(report, started) from None
    report.seconds = time.perf_counter() - started
    return report


@dataclass
class _Pending:
    """A changed or new file, chunked and waiting for its vectors."""

    path: Path
    known: Document | None
    digest: str
    kind: DocKind
    title: str
    chunks: list[Chunk]
    mtime: float
    size: int


def _prepare_file(store: SearchStore, embedder: Embedder, path: Path, known: Document | None,
                  report: IndexReport, options: ChunkOptions | None) -> _Pending | None:
    """Chunks of ``path`` if it must be (re-)embedded; None (counted as skipped) if unchanged."""
    stat = path.stat()
    if known is not None and known.mtime == stat.st_mtime and known.size == stat.st_size:
        report.files_skipped += 1
        return None
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if known is not None and known.content_hash == digest:
        store.touch_document(known, stat.st_mtime, stat.st_size)
        report.files_skipped += 1
        return None
    content, chunks = extract_chunks(embedder, path, data, options)
    return _Pending(path, known, digest, content.kind, content.title, chunks, stat.st_mtime, stat.st_size)


def extract_chunks(embedder: Embedder, path: Path, data: bytes,
                   options: ChunkOptions | None = None) -> tuple[Extracted, list[Chunk]]:
    """What ``index_paths`` makes of the file ``path`` whose bytes are ``data``: its content, its chunks."""
    content = extract(path, data)
    if content.segments is not None:
        return content, chunk_segments(content.segments, embedder, options)[1]
    return content, chunk_text(content.text, embedder, options)


class _Batcher:
    """Embeds the chunks of consecutive files together in full batches (a folder of short notes
    would otherwise run the model on a few texts at a time) and writes each file, in its own
    transaction, as soon as all its vectors are in."""

    def __init__(self, store: SearchStore, embedder: Embedder, coll: Collection, report: IndexReport,
                 on_progress: ProgressCallback | None, cancel: CancelToken | None, total_files: int):
        self.store, self.embedder, self.coll, self.report = store, embedder, coll, report
        self.on_progress, self.cancel, self.total_files = on_progress, cancel, total_files
        self.files_done = 0
        self.queue: list[_Pending] = []

    def file_done(self, path: str) -> None:
        self.files_done += 1
        if self.on_progress is not None:
            self.on_progress(Progress(self.files_done, self.total_files, "files", path))

    def add(self, pending: _Pending) -> None:
        self.queue.append(pending)
        if sum(len(p.chunks) for p in self.queue) >= EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        owners = [(p, i) for p in self.queue for i in range(len(p.chunks))]
        vectors: dict[int, list[np.ndarray]] = {id(p): [] for p in self.queue}
        for p in [p for p in self.queue if not p.chunks]:
            self._write(p, np.zeros((0, self.coll.dim), np.float32))
        for start in range(0, len(owners), EMBED_BATCH):
            if self.cancel is not None and self.cancel.cancelled:
                raise Cancelled("cancelled")
            batch = owners[start:start + EMBED_BATCH]
            out = np.asarray(self.embedder.embed([p.chunks[i].text for p, i in batch]), dtype=np.float32)
            for (p, i), vec in zip(batch, out):
                vectors[id(p)].append(vec)
                if i == len(p.chunks) - 1:  # the file's last chunk: it is complete
                    if self.cancel is not None and self.cancel.cancelled:
                        raise Cancelled("cancelled")
                    self._write(p, np.stack(vectors.pop(id(p))))
            if self.on_progress is not None:
                self.on_progress(Progress(min(start + EMBED_BATCH, len(owners)), len(owners), "chunks",
                                          str(batch[-1][0].path)))
        self.queue.clear()

    def _write(self, p: _Pending, vectors: np.ndarray) -> None:
        self.store.put_document(self.coll, p.kind, str(p.path), p.digest, p.chunks, vectors, title=p.title,
                                mtime=p.mtime, size=p.size)
        self.report.chunks_embedded += len(p.chunks)
        if p.known is None:
            self.report.files_added += 1
        else:
            self.report.files_updated += 1
        self.file_done(str(p.path))


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
        vectors = _embed_chunks(embedder, chunks, cancel)
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
    source is ``history:<id>`` for a record, so re-indexing an edited record replaces it.

    A file transcribed more than once is indexed once, as its newest record: indexing a record
    removes the entries of older records of the same file, and an older record is skipped
    (``files_skipped``) while a newer one is indexed."""
    transcript = getattr(record, "transcript", record)
    if transcript is None or not getattr(transcript, "segments", None):
        raise InvalidFormatError("The transcript has no segments to index", "transcribe something first")
    segments: list[TimedText] = transcript_segments(transcript)
    digest = hashlib.sha256(json.dumps([(s.id, s.start, s.end, s.text) for s in segments]).encode()).hexdigest()
    record_id = getattr(record, "id", None)
    source = transcript_source(record_id) if record_id is not None else f"transcript:{digest[:16]}"
    title = str(getattr(record, "source", "") or getattr(record, "name", "") or source)
    coll = _open_collection(store, embedder, collection)
    older: list[str] = []
    if record_id is not None and getattr(record, "kind", "file") == "file":
        older, newer = same_file_entries(store, coll, int(record_id), title)
        if newer:
            return IndexReport(files_skipped=1)
    report = _put_unless_same(store, embedder, coll, DocKind.TRANSCRIPT, source, digest, title,
                              lambda: chunk_segments(segments, embedder, options)[1], cancel)
    for old in older:
        store.remove_document(coll, old)
        report.files_removed += 1
    return report
