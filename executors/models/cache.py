"""The on-disk side of the model store: content keys, atomic conversions, the import registry.

Layout under ``cache_dir()/models``:
``converted/<name>-<key16>/`` (HF folders, each with a ``.ferrum-source.json`` marker),
``joined/<name>-<key16>/`` (split CT2 models joined back together), ``imported.json``,
``hashes.json`` (file hashes keyed by path, reused while size, mtime, ctime and inode match).

"Changed" means changed content: a converted folder is keyed by the blake2b of the source files
(plus the converter version), so touching a file costs one re-hash but no re-conversion, a moved
folder reuses its conversion, and any edited byte converts again. Folders are built in a temp dir
beside the target and renamed into place, so a crash never leaves a half folder under a real name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..core.paths import cache_dir
from .ct2_whisper import CT2_FILES, convert_ct2_whisper

# Bump when the conversion output changes, so old cached folders are rebuilt.
CONVERTER_VERSION = "ct2-whisper-3"
MARKER = ".ferrum-source.json"
_CHUNK = 8 << 20


def models_root() -> Path:
    root = cache_dir() / "models"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _read_json(path: Path, default):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _write_json_atomic(path: Path, data) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as fp:
        json.dump(data, fp, indent=2)
    os.replace(tmp, path)


def _stat_sig(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def file_hash(path: Path) -> str:
    """blake2b of the file's bytes; reused from ``hashes.json`` while its stat signature is unchanged."""
    path = Path(path).resolve()
    index_path = models_root() / "hashes.json"
    index = _read_json(index_path, {})
    st = path.stat()
    known = index.get(str(path))
    if known and known.get("sig") == _stat_sig(st):
        return known["hash"]
    digest = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as fp:
        while chunk := fp.read(_CHUNK):
            digest.update(chunk)
    # Re-read (another process may have added entries meanwhile) and forget files that are gone.
    index = {k: v for k, v in _read_json(index_path, {}).items() if os.path.exists(k)}
    index[str(path)] = {"sig": _stat_sig(st), "hash": digest.hexdigest()}
    _write_json_atomic(index_path, index)
    return digest.hexdigest()


def content_key(files: list[Path], salt: str = CONVERTER_VERSION) -> str:
    """Hash of the files' names and contents; ``salt`` names the recipe that consumes them."""
    digest = hashlib.blake2b(salt.encode(), digest_size=32)
    for f in files:
        digest.update(f"{Path(f).name}\0{file_hash(f)}\0".encode())
    return digest.hexdigest()


def ct2_source_key(source: Path) -> str:
    return content_key([source / name for name in CT2_FILES])


@contextlib.contextmanager
def _lock(name: str) -> Iterator[None]:
    """Serialise builders of one target across processes (a no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: the rename below still keeps folders whole
        yield
        return
    with open(models_root() / f".lock-{name}", "w") as fp:
        fcntl.flock(fp, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fp, fcntl.LOCK_UN)


def build_atomically(target: Path, build: Callable[[Path], None], marker: dict | None = None) -> Path:
    """Run ``build(tmp_dir)`` and rename the result to ``target``; return ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock(target.name):
        if target.is_dir():
            return target
        for stale in target.parent.glob(f".tmp-{target.name}-*"):  # left by a crashed builder
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".tmp-{target.name}-"))
        try:
            build(tmp)
            if marker is not None:
                (tmp / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
            os.chmod(tmp, 0o755)  # mkdtemp and safetensors create owner-only entries
            for f in tmp.iterdir():
                os.chmod(f, 0o644)
            os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            if target.is_dir():  # lost a race with a process that had no lock: its folder is whole
                return target
            raise
    return target


def _converted_target(source: Path, name: str) -> tuple[Path, str]:
    key = ct2_source_key(source)
    return models_root() / "converted" / f"{name}-{key[:16]}", key


def cached_conversion_of(source: Path, name: str) -> Path | None:
    """The converted folder of a CT2 folder if it exists already (never converts)."""
    if not all((source / f).is_file() for f in CT2_FILES):
        return None
    target, _ = _converted_target(source, name)
    return target if target.is_dir() else None


def converted_folder(source: Path, name: str, replaces_name: bool = False) -> Path:
    """The HF folder converted from the CT2 folder ``source``, converting it first if needed.

    Conversions of older content of the same source folder are deleted, and with ``replaces_name``
    (bundled models) those under the same name too.
    """
    target, key = _converted_target(source, name)
    if target.is_dir():
        return target
    marker = {"name": name, "source": str(source), "key": key, "converter": CONVERTER_VERSION}
    build_atomically(target, lambda tmp: convert_ct2_whisper(source, tmp), marker)
    for folder, meta in converted_folders():
        same_origin = meta.get("source") == str(source) or (replaces_name and meta.get("name") == name)
        if folder != target and same_origin and meta.get("key") != key:
            shutil.rmtree(folder, ignore_errors=True)
    return target


def prune_siblings(target: Path, prefix: str) -> None:
    """Delete the other ``<prefix>*`` folders beside ``target`` (superseded builds)."""
    for folder in target.parent.glob(f"{prefix}*"):
        if folder != target and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def converted_folders() -> list[tuple[Path, dict]]:
    root = models_root() / "converted"
    if not root.is_dir():
        return []
    return [(folder, _read_json(folder / MARKER, {})) for folder in sorted(root.iterdir())
            if folder.is_dir() and not folder.name.startswith(".") and (folder / MARKER).is_file()]


def imported() -> dict[str, dict]:
    return _read_json(models_root() / "imported.json", {})


def register_import(name: str, source: Path, kind: str) -> None:
    with _lock("imported.json"):
        registry = imported()
        registry[name] = {"source": str(source), "kind": kind}
        _write_json_atomic(models_root() / "imported.json", registry)


def folder_size(path: Path) -> int:
    path = Path(path)
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
