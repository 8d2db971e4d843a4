"""``HostSettings``: what the user chose for devices and models, persisted with QSettings."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

# (executors.service.settings and whisper.options import nothing heavy: the window shows before torch loads)
from executors.service.settings import DEFAULT_EMBEDDING, DEFAULT_WHISPER, ServiceSettings
from executors.whisper.options import DEFAULT_BATCH_WINDOWS as DEFAULT_BATCH_SIZE

_GROUP = "host"


@dataclass(frozen=True)
class HostSettings:
    device: str = "auto"            # auto | cpu | cuda[:N] | mps
    dtype: str = "auto"             # auto | float32 | float16 | bfloat16
    threads: int = 0                # CPU threads for torch; 0 = executors.core.device.default_threads()
    whisper_model: str = DEFAULT_WHISPER      # bundled name, CTranslate2 folder or HF folder
    embedding_model: str = DEFAULT_EMBEDDING  # bundled name or HF folder
    auto_index_transcripts: bool = True       # index finished transcripts for search
    batch_size: int = DEFAULT_BATCH_SIZE      # 30 s windows of a file decoded together; 1 = one at a time
    fast_long_files: bool = False             # TranscribeOptions.chunked: VAD pieces decoded in batches

    @classmethod
    def load(cls, qsettings) -> "HostSettings":
        return load_group(cls, qsettings, _GROUP)

    def save(self, qsettings) -> None:
        save_group(self, qsettings, _GROUP)

    def with_changes(self, **changes) -> "HostSettings":
        return replace(self, **changes)

    def service_settings(self) -> ServiceSettings:
        """What the engine service runs with (databases in the data folder, as for the CLI)."""
        return ServiceSettings(whisper_model=self.whisper_model, embedding_model=self.embedding_model,
                               device=self.device, dtype=self.dtype, threads=self.threads or None,
                               auto_index_transcripts=self.auto_index_transcripts)

    def models_to_reload(self, new: "HostSettings") -> list[str]:
        """Which executors ("whisper", "embedding") must reload to apply ``new``."""
        return self.service_settings().models_to_reload(new.service_settings())


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
