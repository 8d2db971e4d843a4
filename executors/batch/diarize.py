"""The one place a batch run asks for speaker labels.

``speaker_labeller()`` returns a picklable ``fn(audio: np.ndarray, transcript) -> transcript``
that the transcription workers apply to each file, or raises if this build has none.
"""

from __future__ import annotations

from ..core.errors import UnsupportedError


def speaker_labeller():
    raise UnsupportedError("Diarization is not available in this build",
                           "run 'ferrum batch' without --diarize")
