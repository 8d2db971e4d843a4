"""``HostSettings``: what the user chose for devices and models, persisted with QSettings."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

# Same values as executors.models.store.DEFAULT_*; repeated here so reading settings never imports
# the model store (the window must show before any heavy import).
DEFAULT_WHISPER = "whisper-tiny.en"
DEFAULT_EMBEDDING = "all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 8            # executors.whisper.options.DEFAULT_BATCH_WINDOWS (kept light here too)

_GROUP = "host"
# Settings that touch every executor: changing one reloads both models.
_SHARED = ("device", "dtype", "threads")


@dataclass(frozen=True)
class HostSettings:
    device: str = "auto"            # auto | cpu | cuda[:N] | mps
    dtype: str = "auto"             # auto | float32 | float16 | bfloat16
    threads: int = 0                # CPU threads for torch; 0 = executors.core.device.default_threads()
    whisper_model: str = DEFAULT_WHISPER      # bundled name, CTranslate2 folder or HF folder
    embedding_model: str = DEFAULT_EMBEDDING  # bundled name or HF folder
    auto_index_transcripts: bool = True       # index finished transcripts for search
    batch_size: int = DEFAULT_BATCH_SIZE      # 30 s windows of a file decoded together; 1 = one at a time

    @classmethod
    def load(cls, qsettings) -> "HostSettings":
        return load_group(cls, qsettings, _GROUP)

    def save(self, qsettings) -> None:
        save_group(self, qsettings, _GROUP)

    def with_changes(self, **changes) -> "HostSettings":
        return replace(self, **changes)

    def models_to_reload(self, new: "HostSettings") -> list[str]:
        """Which executors ("whisper", "embedding") must reload to apply ``new``."""
        if any(getattr(self, k) != getattr(new, k) for k in _SHARED):
            return ["whisper", "embedding"]
        names = []
        if self.whisper_model != new.whisper_model:
            names.append("whisper")
        if self.embedding_model != new.embedding_model:
            names.append("embedding")
        return names


def _coerce(raw, default):
    """QSettings hands back strings from INI files; turn them into the field's type."""
    if isinstance(default, bool):
        return raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        try:
            return int(raw)
        except (TypeError, ValueError):
            return default
    return default if raw is None else str(raw)


def load_group(cls, qsettings, group: str):
    """A settings dataclass from its QSettings group; missing or malformed values take the default."""
    defaults = cls()
    qsettings.beginGroup(group)
    try:
        return cls(**{f.name: _coerce(qsettings.value(f.name, getattr(defaults, f.name)), getattr(defaults, f.name))
                      for f in fields(cls)})
    finally:
        qsettings.endGroup()


def save_group(obj, qsettings, group: str) -> None:
    qsettings.beginGroup(group)
    try:
        for f in fields(obj):
            qsettings.setValue(f.name, getattr(obj, f.name))
    finally:
        qsettings.endGroup()
    qsettings.sync()
