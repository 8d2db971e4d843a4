"""Beam search at temperature 0 (best-of-N sampling at T > 0 is the greedy decoder's batch mode).

Semantics follow openai-whisper's BeamSearchDecoder / faster-whisper:
- each step, every live beam proposes its ``beam_size + 1`` best next tokens; candidates are ranked by
  cumulative log-probability; those ending in <|endoftext|> are set aside as finished, the best
  ``beam_size`` others continue;
- ``patience`` p: search for a window stops once ``round(beam_size * p)`` sequences have finished;
- the winner among finished sequences maximises ``sum_logprob / penalty`` where penalty is the length
  (``length_penalty=None``) or ``((5 + length) / 6) ** length_penalty`` (Google NMT).

``beam_search`` is model-agnostic: ``step`` takes the token rows so far (list of lists, all of equal
length) and returns filtered logits ``[rows, vocab]`` for the next token, keeping its KV cache in step
with the rows; ``reorder(index)`` makes cache row r become old row ``index[r]``.
``BeamSearchDecoder`` binds it to the executor's runtime and is the ``DecodeStrategy`` that
``decoding.decode_with_fallback`` uses when ``beam_size > 1`` at temperature 0.
Extra knobs come from ``TranscribeOptions.extra``: ``patience`` (default 1.0), ``length_penalty``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.errors import InvalidParameterError
from ..core.types import CancelToken

Step = Callable[[list[list[int]]], "torch.Tensor"]
Reorder = Callable[["torch.Tensor"], None]


@dataclass
class Candidate:
    tokens: list[int]            # generated tokens, without the prompt and without <|endoftext|>
    sum_logprob: float
    finished: bool = True

    @property
    def avg_logprob(self) -> float:
        return self.sum_logprob / (len(self.tokens) + 1)


def length_score(sum_logprob: float, length: int, length_penalty: float | None) -> float:
    penalty = length if length_penalty is None else ((5 + length) / 6) ** length_penalty
    return sum_logprob / max(penalty, 1e-9)


def rank(candidates: Sequence[Candidate], length_penalty: float | None) -> list[Candidate]:
    """Best first, by length-normalised log-probability (openai's MaximumLikelihoodRanker)."""
    return sorted(candidates, key=lambda c: length_score(c.sum_logprob, len(c.tokens) + 1, length_penalty),
                  reverse=True)


def validate(beam_size: int, patience: float | None, length_penalty: float | None) -> None:
    if beam_size < 1:
        raise InvalidParameterError("beam_size must be at least 1", "use 1 for greedy decoding")
    if patience is not None and patience <= 0:
        raise InvalidParameterError("patience must be positive", "use 1.0 (the reference default)")
    if length_penalty is not None and not 0 <= length_penalty <= 1:
        raise InvalidParameterError("length_penalty must be between 0 and 1", "use None for plain length")


def beam_search(step: Step, reorder: Reorder, prompts: Sequence[Sequence[int]], *, beam_size: int, eot: int,
                max_new_tokens: int, patience: float | None = 1.0, length_penalty: float | None = None
                ) -> list[list[Candidate]]:
    """Ranked candidates per prompt (best first). ``step``'s cache must hold ``len(prompts) * beam_size``
    rows, prompt i at rows ``i*beam_size … i*beam_size+beam_size-1``."""
    import torch

    validate(beam_size, patience, length_penalty)
    n_audio = len(prompts)
    max_candidates = max(1, round(beam_size * (patience or 1.0)))
    rows = [list(p) for p in prompts for _ in range(beam_size)]
    start = [len(p) for p in prompts]
    sum_lp = [0.0] * len(rows)
    finished: list[dict[tuple, float]] = [{} for _ in range(n_audio)]
    done = [False] * n_audio

    for _ in range(max_new_tokens):
        logprobs = step(rows).float().log_softmax(dim=-1)
        top_lp, top_tok = (t.tolist() for t in logprobs.topk(beam_size + 1, dim=-1))
        next_rows, next_lp, sources = [], [], []
        for i in range(n_audio):
            scores: dict[tuple, float] = {}
            origin: dict[tuple, int] = {}
            for j in range(beam_size):
                r = i * beam_size + j
                prefix = tuple(rows[r])
                for lp, tok in zip(top_lp[r], top_tok[r]):
                    seq = prefix + (tok,)
                    if seq not in scores:     # identical beams (first step) propose each token once
                        scores[seq], origin[seq] = sum_lp[r] + lp, r
            kept = 0
            for seq in sorted(scores, key=scores.__getitem__, reverse=True):
                if seq[-1] == eot:
                    if not done[i] and len(finished[i]) < max_candidates:
                        finished[i][seq] = scores[seq]
                    continue
                next_rows.append(list(seq))
                next_lp.append(scores[seq])
                sources.append(origin[seq])
                kept += 1
                if kept == beam_size:
                    break
            done[i] = done[i] or len(finished[i]) >= max_candidates
        rows, sum_lp = next_rows, next_lp
        reorder(torch.tensor(sources, dtype=torch.long))
        if all(done):
            break

    results = []
    for i in range(n_audio):
        cands = [Candidate(list(seq[start[i]:-1]), lp) for seq, lp in finished[i].items()]
        if len(cands) < beam_size:   # ran out of length: fall back to the live beams
            live = sorted(range(i * beam_size, (i + 1) * beam_size), key=lambda r: sum_lp[r], reverse=True)
            cands += [Candidate(rows[r][start[i]:], sum_lp[r], finished=False)
                      for r in live[:beam_size - len(cands)]]
        results.append(rank(cands, length_penalty))
    return results


class BeamSearchDecoder:
    """Beam search over one window with the executor's runtime, KV store and logit filters."""

    def __init__(self, greedy):
        self.greedy = greedy          # decoding.GreedyDecoder: runtime, special tokens, filters, stats
        self.runtime = greedy.runtime
        self.st = greedy.st

    def decode(self, encoder_out, prompt: list[int], temperature: float, options,
               cancel: CancelToken | None = None, audio=None):
        import torch

        if temperature > 0:
            return self.greedy.decode(encoder_out, prompt, temperature, options, cancel, audio)
        rt, st = self.runtime, self.st
        beam = options.beam_size
        patience = options.extra.get("patience", 1.0)
        length_penalty = options.extra.get("length_penalty")
        validate(beam, patience, length_penalty)
        filt = self.greedy.filters[not options.extra.get("without_timestamps", False)]
        n_prompt = len(prompt)
        sot_at = n_prompt - 1 - prompt[::-1].index(st.sot)
        store = rt.new_store(encoder_out[:1].expand(beam, -1, -1))
        no_speech = [0.0]

        @torch.inference_mode()
        def step(rows: list[list[int]]) -> torch.Tensor:
            if cancel is not None:
                cancel.raise_if_cancelled("transcription")
            if store.lengths[0] == 0:
                with self.greedy._timed("prefill", len(rows)):
                    hidden = rt.step(store, torch.tensor(rows, dtype=torch.long))
                    if st.no_speech is not None:
                        no_speech[0] = float(rt.logits(hidden[:1, sot_at]).softmax(-1)[0, st.no_speech])
                    logits = rt.logits(hidden[:, -1])
            else:
                with self.greedy._timed("decode", len(rows)):
                    last = torch.tensor([[r[-1]] for r in rows], dtype=torch.long)
                    logits = rt.logits(rt.step(store, last)[:, -1])
            sampled = torch.tensor([r[n_prompt:] for r in rows], dtype=torch.long, device=logits.device)
            return filt.apply(logits, sampled.view(len(rows), -1))

        @torch.inference_mode()
        def reorder(index: torch.Tensor) -> None:
            # all rows attend to the same audio: only the self-attention cache has to follow the beams
            if index.tolist() == list(range(len(index))):
                return
            n = store.lengths[0]
            idx = index.to(store.self_k[0].device)
            for cache in (store.self_k, store.self_v):
                for t in cache:
                    t[:, :, :n] = t[:, :, :n].index_select(0, idx)

        max_new = min(st.sample_len, st.n_ctx - n_prompt)
        best = beam_search(step, reorder, [prompt], beam_size=beam, eot=st.eot, max_new_tokens=max_new,
                           patience=patience, length_penalty=length_penalty)[0][0]
        ended = [st.eot] if len(best.tokens) < max_new else []   # a beam cut at the limit ran out
        return self.greedy.result(best.tokens + ended, best.sum_logprob, no_speech[0], 0.0)
