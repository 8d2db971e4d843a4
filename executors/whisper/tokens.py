"""Whisper's special tokens, suppress lists and timestamp rules.

Every id comes from the tokenizer or the generation config of the loaded model; nothing is
hard-coded, so English-only, multilingual and v3 vocabularies all work.  The logit rules are
applied as precomputed boolean masks over the whole batch (no per-token Python loops).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..errors import InvalidParameterError, ModelError

_NEG_INF = float("-inf")


def _token_id(tokenizer, name: str) -> int | None:
    """The id of a special token, or None where the vocabulary lacks it (it maps to unk)."""
    tid = tokenizer.convert_tokens_to_ids(name)
    if tid is None or (tid == tokenizer.unk_token_id and name != tokenizer.unk_token):
        return None
    return int(tid)


@dataclass(frozen=True)
class SpecialTokens:
    eot: int
    sot: int
    sot_prev: int
    sot_lm: int | None
    transcribe: int | None
    translate: int | None
    no_timestamps: int
    no_speech: int | None
    timestamp_begin: int
    vocab_size: int
    is_multilingual: bool
    lang_to_id: dict[str, int] = field(default_factory=dict)
    suppress: tuple[int, ...] = ()
    begin_suppress: tuple[int, ...] = ()
    max_initial_timestamp_index: int | None = 50
    n_ctx: int = 448                   # decoder positions (config.max_target_positions)
    time_precision: float = 0.02       # seconds per timestamp step

    @classmethod
    def from_model(cls, tokenizer, generation_config, config) -> SpecialTokens:
        def need(name: str) -> int:
            tid = _token_id(tokenizer, name)
            if tid is None:
                raise ModelError(f"The Whisper tokenizer has no {name} token",
                                 "the model folder is incomplete; convert or download it again")
            return tid

        lang_to_id = {}
        for token, tid in (getattr(generation_config, "lang_to_id", None) or {}).items():
            lang_to_id[token.strip("<|>")] = int(tid)
        multilingual = bool(getattr(generation_config, "is_multilingual", bool(lang_to_id)))
        no_speech = _token_id(tokenizer, "<|nospeech|>") or _token_id(tokenizer, "<|nocaptions|>")
        begin = getattr(generation_config, "begin_suppress_tokens", None) or []
        suppress = list(getattr(generation_config, "suppress_tokens", None) or [])
        max_initial = getattr(generation_config, "max_initial_timestamp_index", 50)
        seconds_per_position = 30.0 / config.max_source_positions  # 30 s window, 1500 encoder positions
        return cls(
            eot=need("<|endoftext|>"), sot=need("<|startoftranscript|>"), sot_prev=need("<|startofprev|>"),
            sot_lm=_token_id(tokenizer, "<|startoflm|>"), transcribe=_token_id(tokenizer, "<|transcribe|>"),
            translate=_token_id(tokenizer, "<|translate|>"), no_timestamps=need("<|notimestamps|>"),
            no_speech=no_speech, timestamp_begin=need("<|0.00|>"), vocab_size=config.vocab_size,
            is_multilingual=multilingual and bool(lang_to_id), lang_to_id=lang_to_id,
            suppress=tuple(int(t) for t in suppress if int(t) >= 0), begin_suppress=tuple(int(t) for t in begin),
            max_initial_timestamp_index=max_initial, n_ctx=config.max_target_positions,
            time_precision=round(seconds_per_position, 6),
        )

    @property
    def max_prompt_tokens(self) -> int:
        return self.n_ctx // 2 - 1

    @property
    def sample_len(self) -> int:
        return self.n_ctx // 2

    def sot_sequence(self, language: str | None, task: str, timestamps: bool = True) -> list[int]:
        seq = [self.sot]
        if self.is_multilingual:
            if language is None:
                raise InvalidParameterError("No language given for a multilingual model",
                                            "detect the language first or pass one")
            if language not in self.lang_to_id:
                raise InvalidParameterError(f"Unknown language '{language}'",
                                            f"use one of: {', '.join(sorted(self.lang_to_id))}")
            seq.append(self.lang_to_id[language])
            seq.append(self.translate if task == "translate" else self.transcribe)
        if not timestamps:
            seq.append(self.no_timestamps)
        return seq

    def prompt(self, previous: list[int], language: str | None, task: str, timestamps: bool = True) -> list[int]:
        """Decoder prompt: ``<|startofprev|>`` + the last previous tokens, then the SOT sequence."""
        head = [self.sot_prev, *previous[-self.max_prompt_tokens:]] if previous else []
        return head + self.sot_sequence(language, task, timestamps)

    def check_request(self, language: str | None, task: str) -> None:
        """English-only models transcribe English only; say so before any work is done."""
        if self.is_multilingual:
            if language is not None and language not in self.lang_to_id:
                raise InvalidParameterError(f"Unknown language '{language}'",
                                            f"use one of: {', '.join(sorted(self.lang_to_id))}")
            return
        if task == "translate":
            raise InvalidParameterError("This English-only Whisper model cannot translate",
                                        "pick a multilingual model such as whisper-base")
        if language not in (None, "en"):
            raise InvalidParameterError(f"This English-only Whisper model cannot transcribe '{language}'",
                                        "use language 'en' or pick a multilingual model such as whisper-base")


class LogitFilter:
    """SuppressBlank + SuppressTokens + timestamp rules of the reference decoder, batched.

    ``apply(logits, sampled)`` edits ``logits`` [B, V] in place; ``sampled`` [B, n] holds the
    tokens sampled so far (not the prompt).
    """

    def __init__(self, st: SpecialTokens, vocab: int, device, timestamps: bool = True):
        self.st = st
        self.timestamps = timestamps
        ids = torch.arange(vocab, device=device)
        self.ids = ids
        suppress = torch.zeros(vocab, dtype=torch.bool, device=device)
        extra = [st.transcribe, st.translate, st.sot, st.sot_prev, st.sot_lm, st.no_speech]
        for tid in [*st.suppress, *extra]:
            if tid is not None and tid != st.eot and 0 <= tid < vocab:
                suppress[tid] = True
        suppress[st.no_timestamps] = True
        if not timestamps:
            suppress |= ids >= st.timestamp_begin
        self.suppress = suppress
        begin = torch.zeros(vocab, dtype=torch.bool, device=device)
        for tid in st.begin_suppress:
            if 0 <= tid < vocab:
                begin[tid] = True
        self.begin = begin
        self.text = ids < st.timestamp_begin
        self.before_eot = ids < st.eot
        first = self.text.clone()
        if st.max_initial_timestamp_index is not None:
            first |= ids > st.timestamp_begin + st.max_initial_timestamp_index
        self.first = first

    def apply(self, logits: torch.Tensor, sampled: torch.Tensor) -> torch.Tensor:
        n = sampled.shape[1]
        mask = self.suppress if n else self.suppress | self.begin
        logits.masked_fill_(mask, _NEG_INF)
        if not self.timestamps:
            return logits
        if n == 0:
            return logits.masked_fill_(self.first, _NEG_INF)
        tb = self.st.timestamp_begin
        last_ts = sampled[:, -1] >= tb
        penult_ts = sampled[:, -2] >= tb if n >= 2 else torch.ones_like(last_ts)
        block = (last_ts & penult_ts)[:, None] & ~self.text            # pair closed: text next
        block |= (last_ts & ~penult_ts)[:, None] & self.before_eot    # pair open: timestamp or eot
        newest = torch.where(sampled >= tb, sampled, -1).amax(dim=1)
        floor = torch.where(last_ts & ~penult_ts, newest, newest + 1)
        block |= (newest >= 0)[:, None] & (self.ids >= tb) & (self.ids < floor[:, None])
        logits.masked_fill_(block, _NEG_INF)
        # If the timestamps together are likelier than any single text token, force a timestamp.
        # (B3 speed edit: compared on raw logits, as the softmax normaliser cancels on both sides;
        # saves a full-vocabulary log_softmax per step.)
        ts_mass = logits[:, tb:].float().logsumexp(dim=-1)
        best_text = logits[:, :tb].float().amax(dim=-1)
        logits[:, :tb].masked_fill_((ts_mass > best_text)[:, None], _NEG_INF)
        return logits
