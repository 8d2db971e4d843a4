"""Audio that holds no speech by its level alone.

A 30 s window whose peak stays under -60 dBFS is digital silence or a muted input: no audible speech
(``is_digital_silence``). Frame by frame the bar is lower, as a quiet room's pauses go under -60 dBFS
(a third of some meeting excerpts' 17 ms frames do): a frame where no sample reaches one step of 16-bit
audio recorded nothing (``zero_frames``): the zeros between recordings joined into one file, a muted
input, a call recorder's silence suppression. The speaker segmentation network, trained on real
rooms, hears a second of such zeros between two turns as part of them.
"""

from __future__ import annotations

import numpy as np

SILENT_PEAK = 10 ** (-60 / 20)
ONE_STEP = 1 / 32768        # the smallest step of 16-bit audio (-90 dBFS); the meetings' quietest frames peak at 3-10


def is_digital_silence(samples: np.ndarray) -> bool:
    return not samples.size or float(np.abs(samples).max()) < SILENT_PEAK


def zero_frames(samples: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """[frames] bool: frames in which no sample reaches one 16-bit step, frame i running from sample
    ``starts[i]`` (ascending) to the next frame's start (the last to the end of ``samples``); frames past
    the end count as zeros."""
    starts = np.clip(np.asarray(starts, np.int64), 0, samples.size)
    if not samples.size or not starts.size:
        return np.ones(starts.size, bool)
    peaks = np.maximum.reduceat(np.abs(samples), np.minimum(starts, samples.size - 1))
    return (peaks < ONE_STEP) | (starts >= samples.size)
