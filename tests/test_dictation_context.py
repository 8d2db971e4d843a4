"""What a dictation pass hears before its buffer: forced-prefix decoding on the real tiny.en and
the bounded history of committed speech."""

from __future__ import annotations

import numpy as np
import pytest
from speech_eval import load_speech_dev, require_speech_dev

from executors.audio.decode import load_audio
from executors.dictation.context import RATE, RecentSpeech


@pytest.fixture(scope="module")
def clip_tokens(whisper_tiny):
    """A dev clip's encoder output, its decoder prompt and the greedy tokens decoded from it."""
    require_speech_dev()
    ex = whisper_tiny
    mel, _ = ex.log_mel.window(load_audio(load_speech_dev()[40].path))
    enc = ex.encode_window(mel)
    prompt = ex.tokens.sot_sequence(None, "transcribe")
    tokens = ex.decoder.decode_batch(enc, [prompt])[0].tokens
    assert sum(t < ex.tokens.eot for t in tokens) >= 5, "the clip should hold a few words"
    return enc, prompt, tokens


def test_forced_prefix_continues_exactly_like_free_decoding(whisper_tiny, clip_tokens):
    """Forcing the first k greedy tokens (in one prefill) must leave the rest of the greedy decode as it was."""
    enc, prompt, tokens = clip_tokens
    for k in (1, 3, len(tokens) // 2):
        rest = whisper_tiny.decoder.decode_batch(enc, [prompt], prefix=tokens[:k])[0].tokens
        assert rest == tokens[k:], f"prefix of {k} tokens changed the continuation"


def test_require_text_forbids_ending_before_any_text(whisper_tiny, clip_tokens):
    """Forcing the whole transcript leaves only the end to decode; with ``require_text`` the decoder
    must go on with words instead."""
    enc, prompt, tokens = clip_tokens
    st = whisper_tiny.tokens
    free = whisper_tiny.decoder.decode_batch(enc, [prompt], prefix=tokens, max_new_tokens=6)[0].tokens
    forced = whisper_tiny.decoder.decode_batch(enc, [prompt], prefix=tokens, max_new_tokens=6,
                                               require_text=True)[0].tokens
    assert not [t for t in free if t < st.eot]
    assert [t for t in forced if t < st.eot]


def test_recent_speech_gives_the_committed_spans_before_a_buffer():
    recent = RecentSpeech(max_context_s=4.0, history_s=8.0)
    stream = np.arange(10 * RATE, dtype=np.float32)  # sample value = stream index
    for i in range(0, len(stream), 512):
        recent.push(stream[i:i + 512])
    recent.commit(2 * RATE, 3 * RATE, "too old")
    recent.commit(6 * RATE, 7 * RATE, "first")
    recent.commit(8 * RATE, 9 * RATE, " second ")
    recent.commit(9 * RATE, 9 * RATE, "empty span")

    ctx = recent.before(int(9.5 * RATE))
    assert [t for _, _, t in ctx.spans] == ["first", "second"]
    assert ctx.spans[0][:2] == (0.0, 1.0) and ctx.spans[1][:2] == (2.0, 3.0)
    assert ctx.audio[0] == 6 * RATE and ctx.audio[-1] == int(9.5 * RATE) - 1
    assert ctx.seconds == pytest.approx(3.5)

    assert recent.before(int(8.5 * RATE)).spans[-1][2] == "first"  # a span must end by the buffer start
    assert recent.before(int(6.5 * RATE)) is None                  # "too old" began > 4 s earlier
    recent.clear()
    assert recent.before(int(9.5 * RATE)) is None


def test_recent_speech_never_reaches_past_its_history():
    recent = RecentSpeech(max_context_s=10.0, history_s=3.0)
    recent.push(np.ones(5 * RATE, np.float32))
    recent.commit(1 * RATE, 2 * RATE, "overwritten")
    recent.commit(3 * RATE, 4 * RATE, "held")
    ctx = recent.before(5 * RATE)
    assert [t for _, _, t in ctx.spans] == ["held"] and len(ctx.audio) == 2 * RATE


@pytest.mark.parametrize("guess", ["right", "wrong-middle", "longer", "empty"])
def test_a_draft_only_saves_steps_never_changes_the_tokens(whisper_tiny, clip_tokens, guess):
    """Greedy decoding given a guessed continuation keeps the guess only where greedy agrees."""
    enc, prompt, tokens = clip_tokens
    draft = {"right": tokens, "wrong-middle": tokens[:4] + [tokens[4] + 1] + tokens[5:],
             "longer": tokens + tokens[:5], "empty": []}[guess]
    steps = whisper_tiny.stats.decode_ms
    before = steps.count
    got = whisper_tiny.decoder.decode_batch(enc, [prompt], draft=draft)[0].tokens
    assert got == tokens
    forwards = steps.count - before
    if guess in ("right", "longer"):
        assert forwards == 1      # one forward checked every token
    elif guess == "wrong-middle":
        assert forwards == 2 + len(tokens) - 5
    else:
        assert forwards == len(tokens)
    prefixed = whisper_tiny.decoder.decode_batch(enc, [prompt], prefix=tokens[:2], draft=draft[2:])[0].tokens
    assert prefixed == tokens[2:]


def test_corrected_dictation_text_keeps_the_utterance_times():
    from executors.dictation import apply_text_edits

    said = [(0.0, 2.0, "note to self"), (3.0, 5.0, "by milk"), (6.0, 10.0, "call mum")]
    assert apply_text_edits(said, "Note to self.\nBuy milk.\ncall mum\n") == [
        (0.0, 2.0, "Note to self."), (3.0, 5.0, "Buy milk."), (6.0, 10.0, "call mum")]
    joined = apply_text_edits(said, "Note to self: buy milk.\n\nCall Mum.")
    assert [t for _, _, t in joined] == ["Note to self: buy milk.", "Call Mum."]
    assert joined[0][0] == 0.0 and joined[-1][1] == 10.0 and joined[0][1] == joined[1][0]
    assert joined[0][1] > 5.0  # the longer line gets the larger share of the session
    assert apply_text_edits(said, "  \n") == []


def test_corrections_over_several_sessions_stay_with_their_session():
    from executors.dictation import apply_session_edits

    first = [(0.0, 2.0, "note to self"), (3.0, 5.0, "by milk")]
    second = [(0.0, 4.0, "call mum")]  # a later session: its own times from 0
    text = "Note to self.\nBuy milk.\nCall Mum.\n"
    assert apply_session_edits([first, second], text) == [
        [(0.0, 2.0, "Note to self."), (3.0, 5.0, "Buy milk.")], [(0.0, 4.0, "Call Mum.")]]
    joined = apply_session_edits([first, second], "Note to self: buy milk.\nCall Mum.\nThen tea.")
    assert [[t for _, _, t in s] for s in joined] == [["Note to self: buy milk.", "Call Mum."], ["Then tea."]]
    assert all(0.0 <= a < b <= 5.0 for a, b, _ in joined[0]) and joined[1] == [(0.0, 4.0, "Then tea.")]
