"""The search-store side of a batch run: it lives with the driver (one SQLite writer), which
decides what still needs indexing and writes the rows the embedding workers send back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ..core.errors import NotFoundError
from ..search.store import SearchStore
from ..search.types import Chunk, DocKind


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class IndexSink:
    """Documents of one collection, keyed by the transcript file's path (as ``ferrum index`` keys
    them, so indexing the output folder later finds them up to date)."""

    def __init__(self, db: Path | None, collection: str):
        self.store = SearchStore(db)
        self.name = collection
        try:
            self.coll = self.store.collection(collection)
        except NotFoundError:
            self.coll = None  # created with the first embedded transcript (its model and size)

    def needs(self, output: Path, text: str) -> bool:
        """Whether an existing transcript file is missing from the collection or out of date."""
        if self.coll is None:
            return True
        known = self.store.document(self.coll, str(output))
        return known is None or known.content_hash != _digest(text)

    def put(self, source: str, output: str, text: str, packed: str, vectors: bytes) -> None:
        data = json.loads(packed)
        if self.coll is None:
            self.coll = self.store.collection(self.name, model_id=data["model_id"], dim=int(data["dim"]))
        chunks = [Chunk(**c) for c in data["chunks"]]
        matrix = np.frombuffer(vectors, dtype=np.float32).reshape(len(chunks), -1)
        stat = Path(output).stat()
        self.store.put_document(self.coll, DocKind(data["kind"]), output, _digest(text), chunks, matrix,
                                title=Path(source).name, mtime=stat.st_mtime, size=stat.st_size)

    def close(self) -> None:
        self.store.close()
