"""The one place a batch run asks for speaker labels.

``speaker_labeller(options)`` returns a picklable ``fn(audio: np.ndarray, transcript) -> transcript``
that the transcription workers apply to each file: the same diarization ``ferrum transcribe
--diarize`` runs, so a batch output equals the single-file one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diarization import DiarizationOptions, assign_speakers, diarize


@dataclass(frozen=True)
class SpeakerLabeller:
    options: DiarizationOptions

    def __call__(self, audio, transcript):
        return assign_speakers(transcript, diarize(audio, self.options))


def speaker_labeller(options: DiarizationOptions) -> SpeakerLabeller:
    return SpeakerLabeller(options)
