"""Our embeddings equal sentence-transformers' ``encode`` on the same model folder.

Texts are real newsgroup posts: subjects, sentences and whole bodies (many longer than the
model's 256-token limit), plus empty and whitespace-only strings.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from executors.bert import BertModelExecutor


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True).clip(1e-12)
    b = b / np.linalg.norm(b, axis=1, keepdims=True).clip(1e-12)
    return (a * b).sum(axis=1)


@pytest.fixture(scope="module")
def mixed_texts(text_dir) -> list[str]:
    posts = [json.loads(line) for line in (text_dir / "newsgroups_mini.jsonl").read_text(encoding="utf-8").splitlines()]
    subjects = [p["subject"] for p in posts[:100]]
    sentences = [s.strip() for p in posts[100:160] for s in re.split(r"(?<=[.!?])\s+", p["body"]) if s.strip()][:150]
    bodies = [p["body"] for p in posts[160:200]]
    edge = ["", "   ", "\n", " ".join(p["body"] for p in posts[:5])]  # the last is far over the limit
    return subjects + sentences + bodies + edge


@pytest.fixture(scope="module")
def st_model(minilm_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_path), device="cpu")


def test_every_row_equals_sentence_transformers(minilm, st_model, mixed_texts):
    assert len(mixed_texts) >= 250
    too_long = sum(1 for t in set(mixed_texts) if minilm.count_tokens(t) > minilm.max_seq_length)
    assert too_long >= 10, "the set must include texts over the length limit"
    before = minilm.metrics().truncated_texts
    ours = minilm.embed(mixed_texts, use_cache=False)
    reference = st_model.encode(mixed_texts, convert_to_numpy=True, batch_size=32)
    assert ours.dtype == np.float32 and ours.shape == reference.shape == (len(mixed_texts), 384)
    cos = _cosines(ours, reference)
    worst = int(cos.argmin())
    assert cos.min() >= 0.9999, f"row {worst} ({mixed_texts[worst][:60]!r}) has cosine {cos[worst]:.6f}"
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert minilm.metrics().truncated_texts - before == too_long


def test_max_seq_length_and_normalisation_come_from_the_folder(minilm, st_model):
    assert minilm.max_seq_length == st_model.max_seq_length == 256
    assert minilm.pooling.modes == ("mean",) and minilm.pooling.normalize
    assert minilm.pooling.source == "sentence-transformers"


@pytest.fixture(scope="module")
def int8_minilm(minilm_path):
    return BertModelExecutor.load(minilm_path, device="cpu", quantize=True)


@pytest.mark.slow  # dynamic int8 over ~300 texts: about two minutes on 2 cores
def test_int8_stays_close_to_fp32(minilm, int8_minilm, mixed_texts):
    assert int8_minilm.quantized and int8_minilm.info().dtype == "int8"
    cos = _cosines(int8_minilm.embed(mixed_texts, use_cache=False), minilm.embed(mixed_texts, use_cache=False))
    assert cos.mean() >= 0.995, f"int8 mean cosine {cos.mean():.5f}"
    assert cos.min() >= 0.95, f"int8 worst cosine {cos.min():.5f}"


def _variant_folder(src, dst, pooling: dict | None, normalize: bool, st_files: bool = True):
    """A copy of the model folder (weights linked, not copied) with other pooling settings."""
    dst.mkdir()
    for item in src.iterdir():
        if item.is_file() and item.name not in ("modules.json", "sentence_bert_config.json"):
            (dst / item.name).symlink_to(item)
    if not st_files:
        return dst
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
    (dst / "modules.json").write_text(json.dumps(modules))
    (dst / "1_Pooling").mkdir()
    (dst / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384, **pooling}))
    shutil.copy(src / "sentence_bert_config.json", dst / "sentence_bert_config.json")
    return dst


_OFF = {"pooling_mode_cls_token": False, "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False}


@pytest.mark.parametrize("name,pooling,normalize", [
    ("cls", {**_OFF, "pooling_mode_cls_token": True}, False),
    ("max", {**_OFF, "pooling_mode_max_tokens": True}, True),
    ("cls+mean", {**_OFF, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": True}, False),
])
def test_other_pooling_modes_match_sentence_transformers(tmp_path, minilm_path, mixed_texts, name, pooling, normalize):
    from sentence_transformers import SentenceTransformer

    folder = _variant_folder(minilm_path, tmp_path / name.replace("+", "_"), pooling, normalize)
    texts = mixed_texts[::10]
    ours = BertModelExecutor.load(folder, device="cpu")
    assert "+".join(ours.pooling.modes) == name and ours.pooling.normalize is normalize
    reference = SentenceTransformer(str(folder), device="cpu").encode(texts, convert_to_numpy=True)
    got = ours.embed(texts)
    assert got.shape == reference.shape
    assert _cosines(got, reference).min() >= 0.9999
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), np.linalg.norm(reference, axis=1), rtol=1e-4)


def test_plain_hf_folder_defaults_to_masked_mean_and_l2(tmp_path, minilm_path, mixed_texts):
    from sentence_transformers import SentenceTransformer

    folder = _variant_folder(minilm_path, tmp_path / "plain", None, False, st_files=False)
    texts = mixed_texts[::10]
    ours = BertModelExecutor.load(folder, device="cpu")
    assert ours.pooling.source == "default" and ours.pooling.modes == ("mean",) and ours.pooling.normalize
    peer = SentenceTransformer(str(folder), device="cpu")  # plain folder: mean pooling, no Normalize
    assert ours.max_seq_length == peer.max_seq_length
    reference = peer.encode(texts, convert_to_numpy=True)
    got = ours.embed(texts)
    assert _cosines(got, reference).min() >= 0.9999
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
