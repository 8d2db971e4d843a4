"""The one place a batch run asks for speaker labels.

``speaker_labeller(options)`` returns a picklable ``fn(audio: np.ndarray, transcript) -> transcript``
that the transcription workers apply to each file: the same diarization ``ferrum transcribe
--diarize`` runs (the transcript's words as speech evidence), so a batch output equals the single-file one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diarization import DiarizationOptions, diarize_transcript


@dataclass(frozen=True)
class SpeakerLabeller:
    options: DiarizationOptions

    def __call__(self, audio, transcript):
        return diarize_transcript(transcript, audio, self.options)


def speaker_labeller(options: DiarizationOptions) -> SpeakerLabeller:
    return SpeakerLabeller(options)
