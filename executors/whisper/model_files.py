"""A Whisper folder's configs, tokenizer and spectrogram settings, read without transformers.

Importing transformers' Whisper tokenizer, feature extractor and config classes took about 1.3 s of a
process's start (README "Benchmarks", start-up row), longer than reading everything they read.  Here
the configs are the folder's JSON files as attribute objects, the tokenizer is the ``tokenizers``
library on ``tokenizer.json`` (the fast tokenizer transformers wraps), and ``features.LogMel``
computes the log-mel spectrogram itself.  ``tests/test_whisper_model_files.py`` checks every piece
against transformers on the bundled model: the same ids, text, features and settings.

A folder without ``tokenizer.json`` (only ``vocab.json`` and ``merges.txt``) still loads, through
transformers' tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from ..core.errors import ModelError
from ..core.model_json import read_model_json

# What the network and the decoder read from config.json; an export lacking one of these is incomplete.
CONFIG_KEYS = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",
               "encoder_ffn_dim", "decoder_ffn_dim", "num_mel_bins", "max_source_positions",
               "max_target_positions", "vocab_size", "pad_token_id")
_TIMESTAMP = re.compile(r"<\|(\d+\.\d+)\|>")
_INCOMPLETE = "the folder is incomplete; convert or download the model again"


class Settings(SimpleNamespace):
    """A JSON object's keys as attributes (``getattr(settings, key, default)`` for optional ones)."""


def read_config(folder: Path) -> Settings:
    """``config.json``: the network's shape."""
    values = read_model_json(folder / "config.json")
    missing = [k for k in CONFIG_KEYS if k not in values]
    if missing:
        raise ModelError(f"config.json in {folder} lacks {', '.join(missing)}", _INCOMPLETE)
    return Settings(**values)


def read_generation_config(folder: Path) -> Settings:
    """``generation_config.json`` (special ids, suppress lists, languages, alignment heads); empty if absent."""
    path = folder / "generation_config.json"
    return Settings(**read_model_json(path)) if path.is_file() else Settings()


@dataclass(frozen=True)
class MelSettings:
    """``preprocessor_config.json``: what the log-mel spectrogram needs."""
    feature_size: int = 80            # mel bands
    sampling_rate: int = 16000
    hop_length: int = 160
    n_fft: int = 400
    n_samples: int = 480000           # one 30 s window
    nb_max_frames: int = 3000

    @classmethod
    def read(cls, folder: Path) -> MelSettings:
        path = folder / "preprocessor_config.json"
        if not path.is_file():
            raise ModelError(f"No preprocessor_config.json in {folder}", _INCOMPLETE)
        values = read_model_json(path)
        if float(values.get("dither", 0.0)) != 0.0:
            raise ModelError(f"{path} asks for dithered features, which Ferrum does not compute",
                             "use a Whisper export with dither 0 (every released Whisper model has it)")
        return cls(**{k: int(values[k]) for k in cls.__dataclass_fields__ if k in values})


class WhisperTokenizer:
    """The few tokenizer calls the executor makes, on the ``tokenizers`` library."""

    unk_token = None        # tokenizers answers None for a name outside the vocabulary
    unk_token_id = None

    def __init__(self, backend):
        self._backend = backend

    @classmethod
    def from_folder(cls, folder: Path):
        path = folder / "tokenizer.json"
        if not path.is_file():
            from transformers import WhisperTokenizerFast   # builds the fast tokenizer from vocab and merges

            return WhisperTokenizerFast.from_pretrained(folder)
        from tokenizers import Tokenizer

        try:
            return cls(Tokenizer.from_file(str(path)))
        except Exception as exc:
            raise ModelError(f"Could not read the tokenizer in {folder}: {exc}", _INCOMPLETE) from exc

    def convert_tokens_to_ids(self, name: str) -> int | None:
        return self._backend.token_to_id(name)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return self._backend.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        text = self._backend.decode(list(ids), skip_special_tokens=skip_special_tokens)
        return _TIMESTAMP.sub("", text)

    def __len__(self) -> int:
        return self._backend.get_vocab_size(with_added_tokens=True)
