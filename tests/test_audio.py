"""Audio decoding: every supported format from a real speech clip, bad inputs, streaming memory."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest
from audio_fixtures import DEV_CLIP, best_correlation, cut_short, read_clip, resample, write_pyav, write_soundfile

from executors.audio.decode import SAMPLE_RATE, audio_duration, iter_audio, load_audio
from executors.core.errors import InvalidFormatError, NotFoundError


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return read_clip()


@pytest.fixture(scope="module")
def stereo44(clip) -> np.ndarray:
    """The clip at 44.1 kHz on two channels, the right one quieter (a mix-down must average)."""
    x = resample(clip, SAMPLE_RATE, 44100)
    return np.stack([x, 0.5 * x], axis=1)


STEREO = {"stereo44k.wav", "clip.mp3", "clip.mp4", "clip.mkv"}
# name -> (writer, tolerance on length in ms, minimum correlation with the source)
ENCODERS = {
    "pcm16.wav": (lambda p, c, s: write_soundfile(p, c, 16000, "WAV", "PCM_16"), 1, 0.999),
    "pcm24.wav": (lambda p, c, s: write_soundfile(p, c, 16000, "WAV", "PCM_24"), 1, 0.999),
    "float.wav": (lambda p, c, s: write_soundfile(p, c, 16000, "WAV", "FLOAT"), 1, 0.999),
    "stereo44k.wav": (lambda p, c, s: write_soundfile(p, s, 44100, "WAV", "PCM_16"), 1, 0.999),
    "clip.flac": (lambda p, c, s: write_soundfile(p, c, 16000, "FLAC"), 1, 0.999),
    "vorbis.ogg": (lambda p, c, s: write_soundfile(p, c, 16000, "OGG", "VORBIS"), 5, 0.95),
    "clip.opus": (lambda p, c, s: write_soundfile(p, c, 16000, "OGG", "OPUS"), 5, 0.95),
    "clip.mp3": (lambda p, c, s: write_soundfile(p, s, 44100, "MP3", "MPEG_LAYER_III"), 5, 0.95),
    "clip.m4a": (lambda p, c, s: write_pyav(p, c, 16000, "aac"), 10, 0.95),
    "clip.mp4": (lambda p, c, s: write_pyav(p, s, 44100, "aac"), 10, 0.95),
    "clip.webm": (lambda p, c, s: write_pyav(p, resample(c, 16000, 48000), 48000, "libopus"), 10, 0.95),
    "clip.mkv": (lambda p, c, s: write_pyav(p, s, 44100, "flac"), 1, 0.999),
    # Raw ADTS has no priming info: the decoder keeps the encoder's 1024-sample delay.
    "raw.aac": (lambda p, c, s: write_pyav(p, c, 16000, "aac", "adts"), 70, 0.95),
}


@pytest.mark.parametrize("name", list(ENCODERS))
def test_every_format_decodes_to_16k_mono(tmp_path, clip, stereo44, name):
    writer, tol_ms, min_corr = ENCODERS[name]
    path = writer(tmp_path / name, clip, stereo44)
    audio = load_audio(path)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(audio.size - clip.size) / SAMPLE_RATE * 1000 <= tol_ms
    assert abs(audio_duration(path) - clip.size / SAMPLE_RATE) * 1000 <= tol_ms
    corr, _lag = best_correlation(audio, clip)
    assert corr >= min_corr
    level = np.sqrt(np.mean(audio ** 2)) / np.sqrt(np.mean(clip ** 2))
    expected = 0.75 if name in STEREO else 1.0
    assert level == pytest.approx(expected, rel=0.1)  # channels averaged, not summed or one dropped


@pytest.mark.parametrize("name", ["clip.flac", "clip.mp3", "clip.m4a", "clip.webm"])
def test_bytes_and_paths_decode_alike(tmp_path, clip, stereo44, name):
    path = ENCODERS[name][0](tmp_path / name, clip, stereo44)
    from_bytes = load_audio(path.read_bytes())
    np.testing.assert_allclose(from_bytes, load_audio(path), atol=1e-6)
    assert audio_duration(path.read_bytes()) == pytest.approx(audio_duration(path), abs=0.02)


def test_array_is_taken_as_16k_mono(clip):
    assert load_audio(clip) is not None and np.array_equal(load_audio(clip), clip)
    assert load_audio(clip.astype(np.float64)).dtype == np.float32
    assert audio_duration(clip) == pytest.approx(clip.size / SAMPLE_RATE)
    chunks = list(iter_audio(clip, chunk_seconds=2.0))
    assert [c.size for c in chunks[:-1]] == [32000] * (len(chunks) - 1)
    np.testing.assert_array_equal(np.concatenate(chunks), clip)
    for bad in (np.zeros((100, 2), np.float32), np.zeros(100, np.int16), np.zeros(0, np.float32),
                np.array([0.0, np.nan], np.float32)):
        with pytest.raises(InvalidFormatError):
            load_audio(bad)


@pytest.mark.parametrize("name", ["stereo44k.wav", "clip.m4a"])
def test_iter_audio_chunks_match_whole_decode(tmp_path, clip, stereo44, name):
    path = ENCODERS[name][0](tmp_path / name, clip, stereo44)
    chunks = list(iter_audio(path, chunk_seconds=1.5))
    assert all(c.size == 24000 for c in chunks[:-1]) and 0 < chunks[-1].size <= 24000
    np.testing.assert_allclose(np.concatenate(chunks), load_audio(path), atol=1e-5)


def _bad_inputs(tmp_path, clip):
    (tmp_path / "empty.wav").write_bytes(b"")
    (tmp_path / "notes.wav").write_text("this is a text file, not a recording\n" * 40)
    # half an M4A written with its index at the end: not one sample can be found
    cut_short(write_pyav(tmp_path / "full.m4a", clip, 16000, "aac"), tmp_path / "truncated.m4a", 0.5)
    write_soundfile(tmp_path / "zero_length.wav", np.zeros(0, np.float32), 16000, "WAV")
    (tmp_path / "folder.wav").mkdir()
    return ["empty.wav", "notes.wav", "truncated.m4a", "zero_length.wav", "folder.wav"]


def test_bad_inputs_raise_invalid_format_naming_the_file(tmp_path, clip):
    for name in _bad_inputs(tmp_path, clip):
        with pytest.raises(InvalidFormatError) as info:
            load_audio(tmp_path / name)
        assert name in str(info.value), str(info.value)
        assert info.value.hint, f"{name}: no hint"
    with pytest.raises(InvalidFormatError):
        load_audio(b"\x00garbage" * 100)
    with pytest.raises(InvalidFormatError):
        load_audio(b"")


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(NotFoundError, match="nowhere.wav"):
        load_audio(tmp_path / "nowhere.wav")
    with pytest.raises(NotFoundError, match="nowhere.mp3"):
        audio_duration(str(tmp_path / "nowhere.mp3"))


def test_binary_file_objects_are_read(tmp_path, clip):
    path = write_soundfile(tmp_path / "clip.flac", clip, 16000, "FLAC")
    with open(path, "rb") as f:
        np.testing.assert_array_equal(load_audio(f), load_audio(path))
    assert load_audio(io.BytesIO(path.read_bytes())).size == clip.size
    with pytest.raises(InvalidFormatError, match="list"):
        load_audio([0.0, 0.1])


def _peak_traced_bytes(iterator) -> tuple[int, int, int]:
    """(samples, largest chunk, peak traced bytes) while draining ``iterator``."""
    tracemalloc.start()
    try:
        total, largest = 0, 0
        for chunk in iterator:
            total += chunk.size
            largest = max(largest, chunk.size)
        return total, largest, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_ffmpeg_path_streams_in_bounded_memory(tmp_path):
    """2 minutes of 44.1 kHz stereo AAC through PyAV: a whole decode would need 7.7 MB at 16 kHz."""
    rate, seconds = 44100, 120
    t = np.arange(rate * seconds) / rate
    x = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    path = write_pyav(tmp_path / "long.m4a", np.stack([x, x], axis=1), rate, "aac")
    del t, x
    total, largest, peak = _peak_traced_bytes(iter_audio(path, chunk_seconds=10.0))
    assert abs(total - seconds * SAMPLE_RATE) < 0.05 * SAMPLE_RATE
    assert largest == 10 * SAMPLE_RATE
    assert peak < 4 * 1024 * 1024, f"peak traced memory {peak / 1e6:.1f} MB"


def test_long_file_streams_in_bounded_memory(tmp_path):
    """20 minutes of 44.1 kHz stereo: whole decode would need ~77 MB at 16 kHz (~420 MB at source rate)."""
    import soundfile as sf

    rate, minutes, path = 44100, 20, tmp_path / "long.flac"
    t = np.arange(rate * 10) / rate
    with sf.SoundFile(str(path), "w", rate, 2, format="FLAC", subtype="PCM_16") as f:
        for i in range(minutes * 6):
            x = (0.3 * np.sin(2 * np.pi * (200 + 3 * i) * t)).astype(np.float32)
            f.write(np.stack([x, -0.5 * x], axis=1))
    assert audio_duration(path) == pytest.approx(minutes * 60)

    total, largest, peak = _peak_traced_bytes(iter_audio(path, chunk_seconds=30.0))
    assert total == minutes * 60 * SAMPLE_RATE
    assert largest == 30 * SAMPLE_RATE
    assert peak < 16 * 1024 * 1024, f"peak traced memory {peak / 1e6:.1f} MB"


def test_decoder_errors_are_readable(tmp_path, clip):
    """FFmpeg's "[Errno 1094995529] Invalid data found when processing input: '…'" becomes a sentence."""
    damaged = {"not-audio.wav": b"this is not a wave file" * 50,
               "riff.wav": b"RIFF\x00\x00\x00\x00WAVEthis is not audio at all" * 20,
               "broken.mp4": b"\x00\x00\x00\x18ftypmp42" + b"garbage" * 100,
               "notes.m4a": b"just some text, saved with the wrong name\n" * 30}
    for name, data in damaged.items():
        (tmp_path / name).write_bytes(data)
        for read in (load_audio, audio_duration):
            with pytest.raises(InvalidFormatError) as info:
                read(tmp_path / name)
            message = info.value.message
            assert "Errno" not in message and "Invalid data found" not in message and "'" not in message, message
            assert name in message and "not audio or video that can be decoded" in message, message
            assert f"not really a .{name.rsplit('.', 1)[1]} file" in message, message
            assert info.value.hint


def test_a_cut_short_flac_gives_the_audio_before_the_break_and_says_so(tmp_path, clip):
    """An interrupted copy of a real FLAC: what FFmpeg can decode is kept (the same samples as the
    whole file's start), and whoever watches for truncations hears that the file ends early."""
    cut = cut_short(DEV_CLIP, tmp_path / "interrupted.flac")
    audio = load_audio(cut)
    assert 3.0 < audio.size / SAMPLE_RATE < clip.size / SAMPLE_RATE - 2.0, audio.size / SAMPLE_RATE
    corr, lag = best_correlation(audio, clip[: audio.size])
    assert corr > 0.999 and lag == 0

    from executors.audio.truncation import watch_truncations

    with watch_truncations() as found:
        load_audio(cut)
    [truncation] = found
    assert truncation.decoded_seconds == pytest.approx(audio.size / SAMPLE_RATE, abs=0.05)
    assert truncation.expected_seconds == pytest.approx(clip.size / SAMPLE_RATE, abs=0.05)
    assert "interrupted.flac" in truncation.message and "7.1 s" in truncation.message, truncation.message
    assert truncation.hint
    with watch_truncations() as found:
        load_audio(DEV_CLIP)  # a whole file is not reported
    assert found == []


@pytest.mark.parametrize("name", ["clip.flac", "clip.mp3"])
def test_a_third_of_a_file_gives_its_first_third(tmp_path, clip, stereo44, name):
    from executors.audio.truncation import watch_truncations

    cut = cut_short(ENCODERS[name][0](tmp_path / name, clip, stereo44), tmp_path / f"truncated-{name}", 1 / 3)
    with watch_truncations() as found:
        audio = load_audio(cut)
    assert 1.0 < audio.size / SAMPLE_RATE < 3.5
    assert [t.name for t in found] == [str(cut)]
