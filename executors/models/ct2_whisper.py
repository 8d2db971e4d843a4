"""Convert a CTranslate2 (faster-whisper) Whisper folder into a Hugging Face Whisper folder.

Input: ``model.bin`` (``WhisperSpec`` revision 3), ``config.json`` (suppress ids, alignment heads,
language ids), ``tokenizer.json``. Output: ``config.json`` (``WhisperConfig``),
``generation_config.json``, ``model.safetensors``, tokenizer files and ``preprocessor_config.json``,
loadable by ``WhisperForConditionalGeneration`` / ``WhisperProcessor.from_pretrained(folder)``.

Weights keep the source dtype (float16 for the bundled models): the conversion is then a pure
re-layout, so it is bit-exact, and the executor casts to the dtype its device wants. Quantized
sources (int8/int16 with per-row scales) are dequantized to float32: HF Whisper has no int8 layout.
Only numpy and safetensors are needed here (no torch, no ctranslate2).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InvalidFormatError, UnsupportedError
from .ct2_format import Ct2Model, read_ct2_model

CT2_FILES = ("model.bin", "config.json", "tokenizer.json")
N_TIMESTAMPS = 1501  # <|0.00|> … <|30.00|> in 0.02 s steps
SPECIAL_NAMES = ("endoftext", "startoftranscript", "translate", "transcribe", "startoflm",
                 "startofprev", "nocaptions", "notimestamps")
_QKV = ("q_proj", "k_proj", "v_proj")
_LANG_TOKEN = re.compile(r"^<\|([a-z]{2,3}|haw)\|>$")


@dataclass
class WhisperDims:
    vocab_size: int
    n_mels: int
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_heads: int
    decoder_heads: int
    encoder_ffn: int
    decoder_ffn: int
    max_source_positions: int
    max_target_positions: int

    @property
    def is_multilingual(self) -> bool:
        # English-only checkpoints keep the language tokens but have one fewer id (OpenAI's rule).
        return self.vocab_size >= 51865


@dataclass
class WhisperSpecials:
    ids: dict[str, int]          # "endoftext" -> 50256, ... (names of SPECIAL_NAMES)
    languages: dict[str, int]    # "<|en|>" -> id, in vocabulary order


def is_ct2_whisper_folder(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in CT2_FILES)


def _layer_count(model: Ct2Model, scope: str) -> int:
    pattern = re.compile(rf"^{scope}/layer_(\d+)/")
    return 1 + max((int(m.group(1)) for name in model.variables if (m := pattern.match(name))), default=-1)


def read_dims(model: Ct2Model) -> WhisperDims:
    if model.spec_name != "WhisperSpec":
        raise UnsupportedError(f"model.bin holds a {model.spec_name}, not a WhisperSpec",
                               "import a faster-whisper / CTranslate2 Whisper model folder")
    conv1 = model.get("encoder/conv1/weight")
    return WhisperDims(
        vocab_size=model.get("decoder/embeddings/weight").shape[0],
        n_mels=conv1.shape[1],
        d_model=conv1.shape[0],
        encoder_layers=_layer_count(model, "encoder"),
        decoder_layers=_layer_count(model, "decoder"),
        encoder_heads=int(model.get("encoder/num_heads")),
        decoder_heads=int(model.get("decoder/num_heads")),
        encoder_ffn=model.get("encoder/layer_0/ffn/linear_0/weight").shape[0],
        decoder_ffn=model.get("decoder/layer_0/ffn/linear_0/weight").shape[0],
        max_source_positions=model.get("encoder/position_encodings/encodings").shape[0],
        max_target_positions=model.get("decoder/position_encodings/encodings").shape[0],
    )


def _split(array: np.ndarray, parts: int) -> list[np.ndarray]:
    return [np.ascontiguousarray(p) for p in np.split(array, parts, axis=0)]


def _linear(out: dict, hf: str, model: Ct2Model, ct2: str, with_bias: bool = True) -> None:
    out[f"{hf}.weight"] = model.get(f"{ct2}/weight")
    if with_bias:
        out[f"{hf}.bias"] = model.get(f"{ct2}/bias")


def _layer_norm(out: dict, hf: str, model: Ct2Model, ct2: str) -> None:
    out[f"{hf}.weight"] = model.get(f"{ct2}/gamma")
    out[f"{hf}.bias"] = model.get(f"{ct2}/beta")


def _fused_projections(out: dict, hf: str, model: Ct2Model, ct2: str, names: tuple[str, ...]) -> None:
    """Split a fused CT2 projection into HF's separate ones; HF Whisper's k_proj has no bias."""
    weights = _split(model.get(f"{ct2}/weight"), len(names))
    biases = _split(model.get(f"{ct2}/bias"), len(names))
    for name, weight, bias in zip(names, weights, biases):
        out[f"{hf}.{name}.weight"] = weight
        if name == "k_proj":
            if np.any(bias != 0):
                raise InvalidFormatError(f"{ct2}: the fused key bias is not zero",
                                         "this model cannot be expressed as a Hugging Face Whisper model")
        else:
            out[f"{hf}.{name}.bias"] = bias


def _ffn(out: dict, hf: str, model: Ct2Model, ct2: str) -> None:
    _layer_norm(out, f"{hf}.final_layer_norm", model, f"{ct2}/ffn/layer_norm")
    _linear(out, f"{hf}.fc1", model, f"{ct2}/ffn/linear_0")
    _linear(out, f"{hf}.fc2", model, f"{ct2}/ffn/linear_1")


def convert_weights(model: Ct2Model, dims: WhisperDims) -> dict[str, np.ndarray]:
    """Map every CT2 variable to its ``WhisperForConditionalGeneration`` state-dict name."""
    out: dict[str, np.ndarray] = {}
    enc, dec = "model.encoder", "model.decoder"
    _linear(out, f"{enc}.conv1", model, "encoder/conv1")
    _linear(out, f"{enc}.conv2", model, "encoder/conv2")
    out[f"{enc}.embed_positions.weight"] = model.get("encoder/position_encodings/encodings")
    for i in range(dims.encoder_layers):
        hf, ct2 = f"{enc}.layers.{i}", f"encoder/layer_{i}"
        _layer_norm(out, f"{hf}.self_attn_layer_norm", model, f"{ct2}/self_attention/layer_norm")
        _fused_projections(out, f"{hf}.self_attn", model, f"{ct2}/self_attention/linear_0", _QKV)
        _linear(out, f"{hf}.self_attn.out_proj", model, f"{ct2}/self_attention/linear_1")
        _ffn(out, hf, model, ct2)
    _layer_norm(out, f"{enc}.layer_norm", model, "encoder/layer_norm")

    out[f"{dec}.embed_tokens.weight"] = model.get("decoder/embeddings/weight")
    out[f"{dec}.embed_positions.weight"] = model.get("decoder/position_encodings/encodings")
    for i in range(dims.decoder_layers):
        hf, ct2 = f"{dec}.layers.{i}", f"decoder/layer_{i}"
        _layer_norm(out, f"{hf}.self_attn_layer_norm", model, f"{ct2}/self_attention/layer_norm")
        _fused_projections(out, f"{hf}.self_attn", model, f"{ct2}/self_attention/linear_0", _QKV)
        _linear(out, f"{hf}.self_attn.out_proj", model, f"{ct2}/self_attention/linear_1")
        _layer_norm(out, f"{hf}.encoder_attn_layer_norm", model, f"{ct2}/attention/layer_norm")
        _linear(out, f"{hf}.encoder_attn.q_proj", model, f"{ct2}/attention/linear_0")
        _fused_projections(out, f"{hf}.encoder_attn", model, f"{ct2}/attention/linear_1", ("k_proj", "v_proj"))
        _linear(out, f"{hf}.encoder_attn.out_proj", model, f"{ct2}/attention/linear_2")
        _ffn(out, hf, model, ct2)
    _layer_norm(out, f"{dec}.layer_norm", model, "decoder/layer_norm")

    if len({v.dtype for v in out.values()}) > 1:  # dequantized int8 weights beside float16 biases
        out = {k: v.astype(np.float32) for k, v in out.items()}
    projection = model.aliases.get("decoder/projection/weight")
    if projection != "decoder/embeddings/weight":
        raise UnsupportedError("the output projection is not tied to the token embedding",
                               "only standard Whisper checkpoints (tied output projection) are supported")
    return out


def read_specials(tokenizer_json: dict) -> WhisperSpecials:
    by_content = {tok["content"]: tok["id"] for tok in tokenizer_json.get("added_tokens", [])}
    ids = {}
    for name in SPECIAL_NAMES:
        token = f"<|{name}|>"
        if token not in by_content and name == "nocaptions":
            token = "<|nospeech|>"  # large-v3 spelling
        if token not in by_content:
            raise InvalidFormatError(f"tokenizer.json lacks the special token <|{name}|>",
                                     "the folder's tokenizer.json is not a Whisper tokenizer")
        ids[name] = by_content[token]
    languages = {c: i for c, i in sorted(by_content.items(), key=lambda kv: kv[1])
                 if _LANG_TOKEN.match(c) and ids["startoftranscript"] < i < ids["translate"]}
    return WhisperSpecials(ids, languages)


def hf_config(dims: WhisperDims, specials: WhisperSpecials, ct2_config: dict):
    from transformers import WhisperConfig

    ids = specials.ids
    return WhisperConfig(
        vocab_size=dims.vocab_size, num_mel_bins=dims.n_mels, d_model=dims.d_model,
        encoder_layers=dims.encoder_layers, decoder_layers=dims.decoder_layers,
        encoder_attention_heads=dims.encoder_heads, decoder_attention_heads=dims.decoder_heads,
        encoder_ffn_dim=dims.encoder_ffn, decoder_ffn_dim=dims.decoder_ffn,
        max_source_positions=dims.max_source_positions, max_target_positions=dims.max_target_positions,
        bos_token_id=ids["endoftext"], eos_token_id=ids["endoftext"], pad_token_id=ids["endoftext"],
        decoder_start_token_id=ids["startoftranscript"],
        suppress_tokens=list(ct2_config.get("suppress_ids", [])),
        begin_suppress_tokens=list(ct2_config.get("suppress_ids_begin", [])),
        activation_function="gelu", scale_embedding=False, tie_word_embeddings=True,
        architectures=["WhisperForConditionalGeneration"],
    )


def hf_generation_config(dims: WhisperDims, specials: WhisperSpecials, ct2_config: dict):
    from transformers import GenerationConfig

    ids = specials.ids
    fields = {
        "decoder_start_token_id": ids["startoftranscript"], "bos_token_id": ids["endoftext"],
        "eos_token_id": ids["endoftext"], "pad_token_id": ids["endoftext"],
        "no_timestamps_token_id": ids["notimestamps"], "prev_sot_token_id": ids["startofprev"],
        "suppress_tokens": list(ct2_config.get("suppress_ids", [])),
        "begin_suppress_tokens": list(ct2_config.get("suppress_ids_begin", [])),
        "alignment_heads": [list(map(int, pair)) for pair in ct2_config.get("alignment_heads", [])],
        "max_length": dims.max_target_positions, "max_initial_timestamp_index": 50,
        "return_timestamps": False, "is_multilingual": dims.is_multilingual,
    }
    if dims.is_multilingual:
        lang_to_id = dict(specials.languages)
        if "<|iw|>" in lang_to_id:  # older vocabularies spell Hebrew "iw"; transformers asks for "<|he|>"
            lang_to_id.setdefault("<|he|>", lang_to_id["<|iw|>"])
        fields["lang_to_id"] = lang_to_id
        fields["task_to_id"] = {"transcribe": ids["transcribe"], "translate": ids["translate"]}
    return GenerationConfig(**fields)


def timestamp_tokens() -> list[str]:
    return ["<|%.2f|>" % (i * 0.02) for i in range(N_TIMESTAMPS)]


def hf_tokenizer_json(tokenizer_json: dict, specials: WhisperSpecials, vocab_size: int) -> dict:
    """The CT2 tokenizer.json plus the 1,501 timestamp tokens right after ``<|notimestamps|>``."""
    first = specials.ids["notimestamps"] + 1
    if first + N_TIMESTAMPS != vocab_size:
        raise InvalidFormatError(
            f"vocabulary of {vocab_size} does not end with {N_TIMESTAMPS} timestamps after "
            f"<|notimestamps|> ({first - 1})",
            "the tokenizer.json does not belong to this model.bin")
    result = json.loads(json.dumps(tokenizer_json))
    added = [tok for tok in result["added_tokens"] if tok["id"] < first]
    added += [{"id": first + i, "content": token, "single_word": False, "lstrip": False, "rstrip": False,
               "normalized": False, "special": False} for i, token in enumerate(timestamp_tokens())]
    result["added_tokens"] = added
    return result


def _special_tokens(tokenizer_json: dict, specials: WhisperSpecials) -> list[str]:
    """Every special added token up to ``<|notimestamps|>``, in id order (so it is the last one)."""
    last = specials.ids["notimestamps"]
    tokens = sorted((tok["id"], tok["content"]) for tok in tokenizer_json["added_tokens"]
                    if tok.get("special") and tok["id"] <= last)
    return [content for _, content in tokens]


def write_tokenizer(out_dir: Path, tokenizer_json: dict, specials: WhisperSpecials, dims: WhisperDims) -> None:
    from transformers import WhisperFeatureExtractor, WhisperTokenizerFast

    full = hf_tokenizer_json(tokenizer_json, specials, dims.vocab_size)
    staging = out_dir / ".tokenizer.json"
    staging.write_text(json.dumps(full, ensure_ascii=False), encoding="utf-8")
    eot = "<|endoftext|>"
    tokenizer = WhisperTokenizerFast(
        tokenizer_file=str(staging), unk_token=eot, bos_token=eot, eos_token=eot, pad_token=eot,
        additional_special_tokens=_special_tokens(tokenizer_json, specials),
        model_max_length=dims.max_target_positions, add_prefix_space=False,
    )
    tokenizer.save_pretrained(str(out_dir))
    staging.unlink()
    _add_legacy_tokenizer_files(out_dir, full)
    WhisperFeatureExtractor(feature_size=dims.n_mels).save_pretrained(str(out_dir))


def _add_legacy_tokenizer_files(out_dir: Path, full: dict) -> None:
    """What transformers 4.x reads: ``additional_special_tokens`` and the slow tokenizer's vocab/merges."""
    config_path = out_dir / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.setdefault("additional_special_tokens", config.get("extra_special_tokens", []))
    config_path.write_text(json.dumps(config, indent=2, ensure_ascii=False), encoding="utf-8")
    bpe = full["model"]
    (out_dir / "vocab.json").write_text(json.dumps(bpe["vocab"], ensure_ascii=False), encoding="utf-8")
    merges = [m if isinstance(m, str) else " ".join(m) for m in bpe["merges"]]
    (out_dir / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")


def convert_ct2_whisper(src: str | Path, out_dir: str | Path) -> None:
    """Write the HF Whisper folder for the CT2 folder ``src`` into the (existing, empty) ``out_dir``."""
    from safetensors.numpy import save_file

    src, out_dir = Path(src), Path(out_dir)
    missing = [name for name in CT2_FILES if not (src / name).is_file()]
    if missing:
        raise InvalidFormatError(f"{src} is not a CTranslate2 Whisper folder: missing {', '.join(missing)}",
                                 "point at a faster-whisper model folder (model.bin, config.json, tokenizer.json)")
    ct2_config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    tokenizer_json = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    model = read_ct2_model(src / "model.bin")
    dims = read_dims(model)
    specials = read_specials(tokenizer_json)
    save_file(convert_weights(model, dims), str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    del model
    hf_config(dims, specials, ct2_config).save_pretrained(str(out_dir))
    hf_generation_config(dims, specials, ct2_config).save_pretrained(str(out_dir))
    write_tokenizer(out_dir, tokenizer_json, specials, dims)
