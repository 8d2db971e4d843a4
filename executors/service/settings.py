"""``ServiceSettings``: what the engine service loads and where it keeps its data."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..loading import EMBEDDING, WHISPER

DEFAULT_WHISPER = "whisper-tiny.en"     # = executors.models.store.DEFAULT_WHISPER (kept import-free)
DEFAULT_EMBEDDING = "all-MiniLM-L6-v2"  # = executors.models.store.DEFAULT_EMBEDDING
MODEL_KINDS = (WHISPER, EMBEDDING)
# Settings that touch every executor: changing one reloads both models.
_SHARED = ("device", "dtype", "threads")
_PER_MODEL = {WHISPER: ("whisper_model", "whisper_quantize"), EMBEDDING: ("embedding_model", "embedding_int8")}


@dataclass(frozen=True)
class ServiceSettings:
    whisper_model: str = DEFAULT_WHISPER      # bundled name, CTranslate2 folder or HF folder
    embedding_model: str = DEFAULT_EMBEDDING  # bundled name or HF folder
    device: str = "auto"                      # auto | cpu | cuda[:N] | mps
    dtype: str = "auto"                       # auto | float32 | float16 | bfloat16
    threads: int | None = None                # CPU threads for torch; None or 0 = one per core (up to 8)
    whisper_quantize: str | None = "auto"     # see WhisperModelExecutor.from_path
    embedding_int8: bool = False              # int8 linear layers for the embedding model (CPU)
    save_history: bool = True                 # transcriptions land in the transcript history
    auto_index_transcripts: bool = True       # finished transcripts become searchable
    history_db: Path | None = None            # default: data_dir()/history.sqlite3
    search_db: Path | None = None             # default: data_dir()/search.db

    def model_ref(self, kind: str) -> str:
        return self.whisper_model if kind == WHISPER else self.embedding_model

    def with_changes(self, **changes) -> ServiceSettings:
        return replace(self, **changes)

    def with_model_of(self, kind: str, other: ServiceSettings) -> ServiceSettings:
        """These settings with ``other``'s choices for the ``kind`` model (its reference and options)."""
        return replace(self, **{k: getattr(other, k) for k in _PER_MODEL[kind]})

    def models_to_reload(self, new: ServiceSettings) -> list[str]:
        """Which executors ("whisper", "embedding") must reload to apply ``new``."""
        if any(getattr(self, k) != getattr(new, k) for k in _SHARED):
            return list(MODEL_KINDS)
        return [kind for kind, keys in _PER_MODEL.items() if any(getattr(self, k) != getattr(new, k) for k in keys)]
