"""The CT2 → HF Whisper conversion is exact.

* On the same log-mel features and the same prompt, the converted model's greedy tokens
  (transformers ``generate``) equal ctranslate2's (``Whisper.generate``, beam_size=1) on real speech,
  without and with timestamps.
* Converting the converted folder back with ctranslate2's own converter gives bit-identical weights.
* The tokenizer, feature extractor and generation config load and have Whisper's layout.
* An int8 CT2 model is dequantized (within one quantization step of the float weights).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

ctranslate2 = pytest.importorskip("ctranslate2")

from executors.models.ct2_format import read_ct2_model
from executors.models.store import bundled_source, resolve_model

N_CLIPS = 10
N_CLIPS_BASE = 3


def _clip_paths(speech_dir, count: int) -> list:
    lines = (speech_dir / "transcripts.tsv").read_text(encoding="utf-8").splitlines()[1:]
    paths = [line.split("\t")[0] for line in lines if line.strip()]
    asterisk = [p for p in paths if p.startswith("asterisk/")]
    others = [p for p in paths if not p.startswith("asterisk/")]
    # Mostly the telephone prompts, plus two LibriVox sentences (another voice, longer text).
    chosen = asterisk[:: max(1, len(asterisk) // (count - 2))][: count - 2] + others[:2]
    return [speech_dir / p for p in chosen]


class _Pair:
    """The converted HF model and ctranslate2 on the same CT2 folder, both float32 on CPU."""

    def __init__(self, name: str):
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperProcessor

        self.folder = resolve_model(name).path
        self.processor = WhisperProcessor.from_pretrained(self.folder)
        self.hf = WhisperForConditionalGeneration.from_pretrained(self.folder, dtype=torch.float32).eval()
        self.ct2 = ctranslate2.models.Whisper(str(bundled_source(name)), device="cpu", compute_type="float32")
        self.gen = self.hf.generation_config

    def features(self, path) -> np.ndarray:
        import soundfile as sf

        audio, rate = sf.read(str(path), dtype="float32")
        assert rate == 16000
        return self.processor.feature_extractor(audio, sampling_rate=16000, return_tensors="np").input_features

    def prompt(self, timestamps: bool) -> list[int]:
        prompt = [self.gen.decoder_start_token_id]
        if self.gen.is_multilingual:
            prompt += [self.gen.lang_to_id["<|en|>"], self.gen.task_to_id["transcribe"]]
        return prompt if timestamps else prompt + [self.gen.no_timestamps_token_id]

    def ct2_tokens(self, features: np.ndarray, timestamps: bool) -> list[int]:
        result = self.ct2.generate(ctranslate2.StorageView.from_array(np.ascontiguousarray(features)),
                                   [self.prompt(timestamps)], beam_size=1, max_length=448)
        return list(result[0].sequences_ids[0])

    def hf_tokens(self, features: np.ndarray, timestamps: bool) -> list[int]:
        import torch

        extra = {"language": "en", "task": "transcribe"} if self.gen.is_multilingual else {}
        with torch.inference_mode():
            out = self.hf.generate(torch.from_numpy(features), return_timestamps=timestamps,
                                   do_sample=False, num_beams=1, **extra)
        tokens = out[0].tolist()
        prompt = self.prompt(timestamps)
        if tokens[:len(prompt)] == prompt:  # some transformers versions return the prompt too
            tokens = tokens[len(prompt):]
        return [t for t in tokens if t != self.gen.eos_token_id]

    def compare(self, paths, timestamps: bool) -> tuple[int, list[str]]:
        mismatches, texts = [], []
        for path in paths:
            features = self.features(path)
            expected, got = self.ct2_tokens(features, timestamps), self.hf_tokens(features, timestamps)
            texts.append(self.processor.tokenizer.decode(got, skip_special_tokens=True))
            if got != expected:
                mismatches.append(f"{path.name}: ctranslate2 {expected} != converted {got}")
        return len(paths), mismatches, texts


@pytest.fixture(scope="module")
def tiny_pair():
    return _Pair("whisper-tiny.en")


@pytest.mark.parametrize("timestamps", [False, True], ids=["notimestamps", "timestamps"])
def test_tiny_en_greedy_tokens_equal_ctranslate2(tiny_pair, speech_dir, timestamps):
    count, mismatches, texts = tiny_pair.compare(_clip_paths(speech_dir, N_CLIPS), timestamps)
    assert count >= 10
    assert not mismatches, "\n".join(mismatches)
    assert sum(bool(t.strip()) for t in texts) >= count - 1, f"suspiciously empty transcripts: {texts}"


@pytest.mark.slow  # loads and converts Whisper base besides tiny.en
def test_multilingual_base_greedy_tokens_equal_ctranslate2(speech_dir):
    if bundled_source("whisper-base") is None:
        pytest.skip("the multilingual extra is not installed")
    pair = _Pair("whisper-base")
    paths = _clip_paths(speech_dir, N_CLIPS_BASE + 2)[-N_CLIPS_BASE:]
    for timestamps in (False, True):
        _, mismatches, _ = pair.compare(paths, timestamps)
        assert not mismatches, "\n".join(mismatches)


def test_weights_round_trip_through_ctranslate2s_converter_bit_for_bit(tiny_pair, tmp_path):
    from ctranslate2.converters import TransformersConverter

    TransformersConverter(str(tiny_pair.folder), load_as_float16=True).convert(
        str(tmp_path / "back"), quantization="float16", force=True)
    original = read_ct2_model(bundled_source("whisper-tiny.en") / "model.bin")
    back = read_ct2_model(tmp_path / "back" / "model.bin")
    assert back.aliases == original.aliases
    weights = {k for k, v in original.variables.items() if v.ndim > 0}
    assert weights and weights <= set(back.variables)
    differing = [k for k in sorted(weights)
                 if original.variables[k].dtype != back.variables[k].dtype
                 or not np.array_equal(original.variables[k], back.variables[k])]
    assert not differing, f"variables differ after the round trip: {differing[:10]}"
    config_back = json.loads((tmp_path / "back" / "config.json").read_text())
    config_orig = json.loads((bundled_source("whisper-tiny.en") / "config.json").read_text())
    for key in ("suppress_ids", "suppress_ids_begin", "alignment_heads"):
        assert config_back[key] == config_orig[key], key


def _legacy_bpe_ids(folder, text: str) -> list[int]:
    """Token ids from vocab.json + merges.txt (what transformers 4.x's slow tokenizer reads)."""
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers.models import BPE

    bpe = Tokenizer(BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt")))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return bpe.encode(text).ids


@pytest.mark.parametrize("name, vocab, notimestamps, multilingual",
                         [("whisper-tiny.en", 51864, 50362, False), ("whisper-base", 51865, 50363, True)])
def test_tokenizer_processor_and_generation_config(name, vocab, notimestamps, multilingual):
    from transformers import GenerationConfig, WhisperFeatureExtractor, WhisperProcessor, WhisperTokenizerFast

    if bundled_source(name) is None:
        pytest.skip(f"{name} is not installed")
    folder = resolve_model(name).path
    tok = WhisperTokenizerFast.from_pretrained(folder)
    assert len(tok) == vocab
    assert tok.convert_tokens_to_ids("<|notimestamps|>") == notimestamps
    assert tok.all_special_ids[-1] == notimestamps, "timestamps must start right after <|notimestamps|>"
    assert tok.convert_tokens_to_ids("<|0.00|>") == notimestamps + 1
    assert tok.convert_tokens_to_ids("<|30.00|>") == vocab - 1
    assert tok.pad_token == "<|endoftext|>"
    words = tok(" hello world", add_special_tokens=False).input_ids
    ids = [notimestamps + 1, *words, tok.convert_tokens_to_ids("<|1.50|>")]
    assert tok.decode(ids, decode_with_timestamps=True) == "<|0.00|> hello world<|1.50|>"
    assert tok.decode(ids, output_offsets=True)["offsets"][0]["timestamp"] == (0.0, 1.5)
    assert WhisperFeatureExtractor.from_pretrained(folder).feature_size == 80
    assert _legacy_bpe_ids(folder, " Press 1 to play, Ferrum!") == tok(" Press 1 to play, Ferrum!",
                                                                     add_special_tokens=False).input_ids
    assert type(WhisperProcessor.from_pretrained(folder).tokenizer).__name__.startswith("WhisperTokenizer")

    gen = GenerationConfig.from_pretrained(folder)
    ct2_config = json.loads((bundled_source(name) / "config.json").read_text())
    assert gen.no_timestamps_token_id == notimestamps
    assert gen.suppress_tokens == ct2_config["suppress_ids"]
    assert gen.begin_suppress_tokens == ct2_config["suppress_ids_begin"]
    assert gen.alignment_heads == ct2_config["alignment_heads"]
    assert gen.is_multilingual is multilingual
    assert gen.decoder_start_token_id == tok.convert_tokens_to_ids("<|startoftranscript|>")
    assert gen.eos_token_id == tok.convert_tokens_to_ids("<|endoftext|>")
    if multilingual:
        assert sorted(set(gen.lang_to_id.values())) == ct2_config["lang_ids"]
        assert gen.lang_to_id["<|fr|>"] == tok.convert_tokens_to_ids("<|fr|>")
        assert gen.task_to_id == {"transcribe": tok.convert_tokens_to_ids("<|transcribe|>"),
                                  "translate": tok.convert_tokens_to_ids("<|translate|>")}
    else:
        assert getattr(gen, "lang_to_id", None) is None


def test_an_int8_ct2_model_is_dequantized_to_float32(tmp_path, monkeypatch):
    from ctranslate2.converters import TransformersConverter
    from safetensors.numpy import load_file

    float_folder = resolve_model("whisper-tiny.en").path
    monkeypatch.setenv("FERRUM_CACHE_DIR", str(tmp_path / "cache"))
    int8_dir = tmp_path / "tiny-int8"
    TransformersConverter(str(float_folder), load_as_float16=True).convert(str(int8_dir), quantization="int8")
    (int8_dir / "tokenizer.json").write_bytes((bundled_source("whisper-tiny.en") / "tokenizer.json").read_bytes())
    quantized = read_ct2_model(int8_dir / "model.bin")
    assert quantized.is_quantized and quantized.variables["encoder/layer_0/ffn/linear_0/weight"].dtype == np.int8

    converted = load_file(str(resolve_model(int8_dir).path / "model.safetensors"))
    reference = load_file(str(float_folder / "model.safetensors"))
    assert converted.keys() == reference.keys()
    assert {v.dtype.name for v in converted.values()} == {"float32"}
    name = "model.encoder.layers.0.fc1.weight"
    ref = reference[name].astype(np.float32)
    step = np.abs(ref).max(axis=1, keepdims=True) / 127  # one int8 step per output row
    assert np.all(np.abs(converted[name] - ref) <= step / 2 + 1e-3)
    assert not np.array_equal(converted[name], ref), "int8 weights should not be bit-identical"
