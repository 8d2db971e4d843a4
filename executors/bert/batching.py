"""Length-sorted batches under a token budget, and padding of token-id lists into tensors.

Sorting by length keeps padding small; the budget (batch rows × longest row) keeps the
attention activations of one forward pass bounded whatever the text lengths are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Batch:
    indices: list[int]  # positions in the caller's input, so results can be put back in order
    max_len: int

    @property
    def padded_tokens(self) -> int:
        return len(self.indices) * self.max_len


def plan_batches(lengths: Sequence[int], token_budget: int = 8192, max_batch_size: int = 128) -> list[Batch]:
    """Group input positions into batches, longest first; every input appears exactly once.

    A batch grows while ``rows × longest row <= token_budget`` and ``rows <= max_batch_size``;
    an input longer than the budget on its own still gets a batch of one.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i], reverse=True)
    batches: list[Batch] = []
    current: list[int] = []
    longest = 0
    for i in order:
        length = max(1, int(lengths[i]))
        # sorted longest first, so the first row fixes the batch's padded width
        width = longest or length
        if current and ((len(current) + 1) * width > token_budget or len(current) >= max_batch_size):
            batches.append(Batch(current, longest))
            current, longest = [], 0
        if not current:
            longest = length
        current.append(i)
    if current:
        batches.append(Batch(current, longest))
    return batches


def pad(sequences: Sequence[Sequence[int]], pad_id: int = 0, device=None):
    """Right-pad token-id lists into ``(input_ids, attention_mask)`` int64 tensors."""
    import torch

    width = max((len(s) for s in sequences), default=0)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    if device is not None:
        ids, mask = ids.to(device), mask.to(device)
    return ids, mask
