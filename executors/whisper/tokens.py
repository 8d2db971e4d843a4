"""Whisper's special tokens, suppress lists and timestamp rules.

Every id comes from the tokenizer or the generation config of the loaded model; nothing is
hard-coded, so English-only, multilingual and v3 vocabularies all work.  The logit rules are
applied as precomputed boolean masks over the whole batch (no per-token Python loops).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..core.errors import InvalidParameterError, ModelError

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
    tokens sampled so far (not the prompt).  Each step touches only the suppressed ids and the
    timestamp slice; full-vocabulary writes happen only for the rows a rule actually blocks (on
    the CPU every full-width elementwise op is a thread-pool round trip, which under load costs
    more than the arithmetic).
    """

    def __init__(self, st: SpecialTokens, vocab: int, device, timestamps: bool = True):
        self.st = st
        self.timestamps = timestamps
        extra = [st.transcribe, st.translate, st.sot, st.sot_prev, st.sot_lm, st.no_speech, st.no_timestamps]
        suppress = {t for t in [*st.suppress, *extra] if t is not None and t != st.eot and 0 <= t < vocab}
        if not timestamps:
            suppress |= set(range(st.timestamp_begin, vocab))
        begin = suppress | {t for t in st.begin_suppress if 0 <= t < vocab}
        self.suppress = torch.tensor(sorted(suppress), dtype=torch.long, device=device)
        self.begin = torch.tensor(sorted(begin), dtype=torch.long, device=device)
        self.ts_ids = torch.arange(vocab - st.timestamp_begin, device=device)  # timestamp index 0, 1, ...

    def apply(self, logits: torch.Tensor, sampled: torch.Tensor) -> torch.Tensor:
        n = sampled.shape[1]
        logits.index_fill_(1, self.suppress if n else self.begin, _NEG_INF)
        if not self.timestamps:
            return logits
        tb = self.st.timestamp_begin
        stamps = logits[:, tb:]
        if n == 0:  # the first token is a timestamp, no later than max_initial_timestamp_index
            logits[:, :tb] = _NEG_INF
            if self.st.max_initial_timestamp_index is not None:
                stamps[:, self.st.max_initial_timestamp_index + 1:] = _NEG_INF
            return logits
        last_ts = sampled[:, -1] >= tb
        penult_ts = sampled[:, -2] >= tb if n >= 2 else torch.ones_like(last_ts)
        pair_open = last_ts & ~penult_ts                                 # timestamp or eot next
        newest = torch.where(sampled >= tb, sampled, -1).amax(dim=1)     # -1: no timestamp yet
        floor = torch.where(pair_open, newest, newest + 1) - tb          # timestamps never go back
        blocked = (self.ts_ids[None, :] < floor[:, None]) | (last_ts & penult_ts)[:, None]  # closed: text next
        stamps.masked_fill_(blocked, _NEG_INF)
        _block_rows(logits[:, :self.st.eot], pair_open)
        # If the timestamps together are likelier than any single text token, force a timestamp.
        # (B3 speed edit: compared on raw logits, as the softmax normaliser cancels on both sides;
        # saves a full-vocabulary log_softmax per step.)
        force = stamps.logsumexp(dim=-1) > logits[:, :tb].amax(dim=-1)
        _block_rows(logits[:, :tb], force)
        return logits


def _block_rows(span: torch.Tensor, rows: torch.Tensor) -> None:
    """Set ``span`` [B, n] to -inf in the ``rows`` [B] that are True: on the CPU only those rows are
    written (usually none); on a GPU a masked fill avoids a device sync."""
    if span.device.type != "cpu":
        span.masked_fill_(rows[:, None], _NEG_INF)
    elif bool(rows.any()):
        span[rows] = _NEG_INF
