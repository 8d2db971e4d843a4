"""Word-level timestamps from cross-attention alignment heads (the method of openai-whisper's timing).

One extra decoder pass over a window's final text tokens gives, for the alignment heads only, the
cross-attention from each token to the 20 ms encoder frames. Those weights are normalised per
frame over tokens, median-filtered along time, averaged over heads, and a monotonic path through
the (token x frame) matrix is found by dynamic time warping; a word starts where its first token's
path first reaches it. SDPA never materialises attention weights, so the alignment heads'
attention is recomputed here from the captured cross-attention query inputs and the encoder output.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..core.errors import InvalidParameterError, wrap_unexpected
from ..transcripts.results import Segment, Word

FRAMES_PER_SECOND = 50          # encoder frames: 30 s -> 1500
MEDIAN_FILTER_WIDTH = 7
PREPEND_PUNCTUATION = "\"'“¿([{-"
APPEND_PUNCTUATION = "\"'.。,，!！?？:：”)]}、"
_NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue"}


@dataclass
class WindowAlignment:
    """Inputs for one 30 s window; ``segments`` hold its text (timestamp tokens are ignored)."""
    encoder_out: "torch.Tensor"      # [1, frames, d] (or [frames, d])
    sot_sequence: list[int]          # start-of-transcript tokens the window was decoded with
    segments: list[Segment]
    num_frames: int                  # mel frames of real audio in the window (<= 3000)
    time_offset: float               # window start, seconds


def default_alignment_heads(model) -> list[tuple[int, int]]:
    """Heads from the generation config, else (as openai-whisper does) every head of the upper half."""
    heads = getattr(getattr(model, "generation_config", None), "alignment_heads", None)
    if heads:
        return [(int(layer), int(head)) for layer, head in heads]
    cfg = model.config
    return [(layer, head) for layer in range(cfg.decoder_layers // 2, cfg.decoder_layers)
            for head in range(cfg.decoder_attention_heads)]


def cross_attention(runtime, encoder_out, tokens: Sequence[int], heads: Sequence[tuple[int, int]]):
    """Run the decoder once over ``tokens`` (``runtime``: the executor's ``WhisperRuntime``).

    Returns (pre-softmax cross-attention of ``heads`` [n_heads, T, frames], logits [T, V]). The
    queries are rebuilt from the cross-attention layer-norm output captured by a hook; the keys are
    the ones the runtime already computed into the KV store."""
    import torch

    layers = runtime.decoder.layers
    wanted: dict[int, list[int]] = {}
    for layer, head in heads:
        wanted.setdefault(layer, []).append(head)
    captured: dict[int, torch.Tensor] = {}

    def capture(layer_idx):
        def hook(_module, _inputs, output):
            captured[layer_idx] = output
        return hook

    handles = [layers[i].encoder_attn_layer_norm.register_forward_hook(capture(i)) for i in wanted]
    enc = encoder_out if encoder_out.dim() == 3 else encoder_out.unsqueeze(0)
    try:
        with torch.inference_mode():
            store = runtime.new_store(enc[:1])
            hidden = runtime.step(store, torch.tensor([list(tokens)], dtype=torch.long))
            logits = runtime.logits(hidden)[0]
            rows = []
            for layer_idx, layer_heads in wanted.items():
                attn = layers[layer_idx].encoder_attn
                q = runtime._heads(attn.q_proj(captured[layer_idx]) * attn.scaling)   # [1, H, T, hd]
                sel = torch.tensor(layer_heads, device=q.device)
                k = store.cross_k[layer_idx][0, sel]                                     # [h, frames, hd]
                rows.append(q[0, sel].float() @ k.float().transpose(-1, -2))
    finally:
        for h in handles:
            h.remove()
    return torch.cat(rows, dim=0), logits


def _median_filter(x, width: int):
    """Median over the last axis with reflect padding (odd ``width``)."""
    import torch.nn.functional as F

    if width <= 1 or x.shape[-1] <= width // 2:
        return x
    pad = width // 2
    shape = x.shape
    y = F.pad(x.reshape(-1, 1, shape[-1]), (pad, pad), mode="reflect")
    return y.unfold(-1, width, 1).median(dim=-1).values.reshape(shape)


def dtw_path(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cheapest monotonic path from (0, 0) to (N-1, M-1) with diagonal, down and right steps.

    Filled along anti-diagonals so each step is one vectorised numpy operation (N + M steps)."""
    n, m = cost.shape
    acc = np.full((n + 1, m + 1), np.inf, dtype=np.float64)
    acc[0, 0] = 0.0
    move = np.zeros((n + 1, m + 1), dtype=np.int8)   # 0 diagonal, 1 from above, 2 from left
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        options = np.stack([acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1]])
        best = options.argmin(axis=0)
        acc[i, j] = cost[i - 1, j - 1] + options[best, np.arange(len(i))]
        move[i, j] = best
    i, j, path = n, m, []
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        step = move[i, j]
        if step == 0:
            i, j = i - 1, j - 1
        elif step == 1:
            i -= 1
        else:
            j -= 1
    path.reverse()
    arr = np.array(path, dtype=np.int64)
    return arr[:, 0], arr[:, 1]


def split_words(tokens: Sequence[int], decode: Callable[[list[int]], str], language: str | None
                ) -> tuple[list[str], list[list[int]]]:
    """Group tokens into words: a word starts at a token with a leading space or at punctuation.

    Tokens are first joined into whole unicode characters (a byte-level token can split one)."""
    units: list[tuple[str, list[int]]] = []
    pending: list[int] = []
    for tok in tokens:
        pending.append(tok)
        text = decode(pending)
        if "\ufffd" not in text:
            units.append((text, pending))
            pending = []
    if pending:
        units.append((decode(pending), pending))
    if language in _NO_SPACE_LANGUAGES:
        return [u for u, _ in units], [t for _, t in units]
    words: list[str] = []
    groups: list[list[int]] = []
    for text, toks in units:
        starts_word = text.startswith(" ") or text.strip() in string.punctuation or not words
        if starts_word and text.strip():
            words.append(text)
            groups.append(list(toks))
        elif words:
            words[-1] += text
            groups[-1] += toks
        else:
            words.append(text)
            groups.append(list(toks))
    return words, groups


def merge_punctuation(words: list[dict]) -> list[dict]:
    """Attach opening punctuation to the next word and closing punctuation to the previous one."""
    out: list[dict] = []
    carry: dict | None = None
    for w in words:
        stripped = w["word"].strip()
        if stripped and all(c in PREPEND_PUNCTUATION for c in stripped) and w is not words[-1]:
            carry = w if carry is None else {**carry, "word": carry["word"] + w["word"],
                                             "tokens": carry["tokens"] + w["tokens"]}
            continue
        if carry is not None:
            w = {**w, "word": carry["word"] + w["word"], "tokens": carry["tokens"] + w["tokens"]}
            carry = None
        if out and stripped and all(c in APPEND_PUNCTUATION for c in stripped):
            prev = out[-1]
            out[-1] = {**prev, "word": prev["word"] + w["word"], "tokens": prev["tokens"] + w["tokens"]}
            continue
        out.append(w)
    if carry is not None:
        out.append(carry)
    return out


def align_tokens(runtime, encoder_out, sot_sequence: Sequence[int], text_tokens: Sequence[int], num_frames: int, *,
                 eot: int, no_timestamps: int, heads: Sequence[tuple[int, int]] | None = None,
                 medfilt_width: int = MEDIAN_FILTER_WIDTH) -> tuple[np.ndarray, np.ndarray]:
    """(starts, probabilities) of ``text_tokens`` (no timestamp tokens) in one window: ``starts[i]`` is the
    second (from the window's start) where token i begins, ``starts[-1]`` where the last one ends; each
    token's probability after ``sot_sequence + <|notimestamps|>`` (as openai-whisper re-scores the text)."""
    import torch

    if medfilt_width % 2 == 0:
        raise InvalidParameterError("medfilt_width must be odd", "use 7 (openai-whisper's default)")
    heads = list(heads) if heads else default_alignment_heads(runtime.model)
    prefix = list(sot_sequence)
    if not prefix or prefix[-1] != no_timestamps:
        prefix.append(no_timestamps)
    tokens = prefix + list(text_tokens) + [eot]
    try:
        qk, logits = cross_attention(runtime, encoder_out, tokens, heads)
    except Exception as exc:  # pragma: no cover - model structure mismatch
        raise wrap_unexpected(exc, "computing word timestamps") from exc
    n_frames = max(1, min(qk.shape[-1], num_frames // 2))
    weights = qk[:, :, :n_frames].softmax(dim=-1)
    std, mean = torch.std_mean(weights, dim=-2, keepdim=True, unbiased=False)
    weights = (weights - mean) / (std + 1e-8)
    weights = _median_filter(weights, medfilt_width)
    n_sot = len(prefix)
    # the query at position p predicts token p + 1: rows from <|notimestamps|> to the last text token
    matrix = weights.mean(dim=0)[n_sot - 1:-1].cpu().double().numpy()
    text_idx, time_idx = dtw_path(-matrix)

    lp = logits[n_sot - 1:n_sot - 1 + len(text_tokens)].log_softmax(dim=-1)
    probs = lp.gather(1, torch.tensor(list(text_tokens), device=lp.device)[:, None])[:, 0].exp().cpu().double().numpy()
    # when the path first enters each row: token i starts at row i, the last one ends at row len(text)
    jumps = np.diff(text_idx, prepend=-1).astype(bool)
    return time_idx[jumps] / FRAMES_PER_SECOND, probs


def align_window(runtime, window: WindowAlignment, *, eot: int, no_timestamps: int,
                 decode: Callable[[list[int]], str], heads: Sequence[tuple[int, int]] | None = None,
                 language: str | None = "en", medfilt_width: int = MEDIAN_FILTER_WIDTH) -> list[list[Word]]:
    """Words for every segment of one window, with absolute times; fills nothing in place."""
    seg_tokens = [[t for t in s.tokens if t < eot] for s in window.segments]
    text_tokens = [t for toks in seg_tokens for t in toks]
    if not text_tokens:
        return [[] for _ in window.segments]
    token_start, probs = align_tokens(runtime, window.encoder_out, window.sot_sequence, text_tokens,
                                      window.num_frames, eot=eot, no_timestamps=no_timestamps, heads=heads,
                                      medfilt_width=medfilt_width)
    per_segment: list[list[dict]] = []
    pos = 0
    for toks in seg_tokens:
        words, groups = split_words(toks, decode, language)
        items = []
        for word, group in zip(words, groups):
            start, end = pos, pos + len(group)
            items.append({"word": word, "tokens": group,
                          "start": float(token_start[start]), "end": float(token_start[end]),
                          "probability": float(probs[start:end].mean())})
            pos = end
        per_segment.append(merge_punctuation(items))
    limit_long_words(per_segment)
    return [_to_words(items, seg, window.time_offset) for items, seg in zip(per_segment, window.segments)]


SENTENCE_END = ".。!！?？"


def limit_long_words(per_segment: list[list[dict]]) -> None:
    """DTW gives a word that follows a pause (or precedes one) all of the silence next to it.
    Cap such words at twice the median word duration (itself capped at 0.7 s): a segment's first
    word and a word after a sentence end keep their end; a sentence-final or last word keeps its start."""
    items = [w for seg in per_segment for w in seg]
    durations = np.array([w["end"] - w["start"] for w in items])
    durations = durations[durations > 0]
    if not len(durations):
        return
    max_duration = 2 * min(0.7, float(np.median(durations)))
    for seg in per_segment:
        for i, w in enumerate(seg):
            if w["end"] - w["start"] <= max_duration:
                continue
            text = w["word"].strip()
            if i == 0 or seg[i - 1]["word"].strip()[-1:] in SENTENCE_END:
                w["start"] = w["end"] - max_duration
            elif text[-1:] in SENTENCE_END or i == len(seg) - 1:
                w["end"] = w["start"] + max_duration


def _to_words(items: list[dict], seg: Segment, offset: float) -> list[Word]:
    """Absolute, monotonic times clamped into the segment."""
    words: list[Word] = []
    last = seg.start
    for it in items:
        start = min(max(it["start"] + offset, last), seg.end)
        end = min(max(it["end"] + offset, start), seg.end)
        words.append(Word(round(start, 3), round(end, 3), it["word"], round(it["probability"], 4)))
        last = end
    return words


def add_word_timestamps(ex, segments: list[Segment], encoder_out, options, language: str | None = None) -> None:
    """Fill ``segment.words`` for the segments of ONE decoded window (the executor's hook).

    The window's start and the span of real audio are recovered from the segments' own timestamp
    tokens, so the caller passes nothing else; ``language`` matters for multilingual models only."""
    st = ex.tokens
    segs = [s for s in segments if any(t < st.eot for t in s.tokens)]
    for s in segments:
        s.words = []
    if not segs:
        return
    first = segs[0]
    if first.tokens and first.tokens[0] >= st.timestamp_begin:
        offset = first.start - (first.tokens[0] - st.timestamp_begin) * st.time_precision
    else:
        offset = first.start
    end_rel = max(s.end for s in segs) - offset
    # mel frames (10 ms) covering the window's speech, a little past the last timestamp
    num_frames = int(min(30.0, end_rel + 0.5) * 100)
    lang = language or options.language
    sot = st.sot_sequence(lang if st.is_multilingual else None, options.task)
    window = WindowAlignment(encoder_out, sot, segs, num_frames, offset)
    aligned = align_window(ex.runtime, window, eot=st.eot, no_timestamps=st.no_timestamps,
                           decode=lambda ids: ex.tokenizer.decode(ids), heads=None, language=lang)
    for seg, words in zip(segs, aligned):
        seg.words = words
