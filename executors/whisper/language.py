"""Spoken-language detection: one decoder step after <|startoftranscript|>, restricted to the
language tokens of the vocabulary."""

from __future__ import annotations

import torch

from ..core.errors import UnsupportedError
from .forward import WhisperRuntime
from .tokens import SpecialTokens


@torch.inference_mode()
def detect_language(runtime: WhisperRuntime, st: SpecialTokens, encoder_out: torch.Tensor) -> list[tuple[str, float]]:
    """(language, probability) pairs for the first row of ``encoder_out``, most likely first."""
    if not st.is_multilingual:
        return [("en", 1.0)]
    if not st.lang_to_id:
        raise UnsupportedError("This Whisper model lists no languages", "pass the language explicitly")
    store = runtime.new_store(encoder_out[:1])
    logits = runtime.logits(runtime.step(store, torch.tensor([[st.sot]]))[:, -1])[0]
    codes = list(st.lang_to_id)
    ids = torch.tensor([st.lang_to_id[c] for c in codes], device=logits.device)
    probs = logits.index_select(0, ids).softmax(dim=-1).tolist()
    return sorted(zip(codes, probs), key=lambda pair: pair[1], reverse=True)
