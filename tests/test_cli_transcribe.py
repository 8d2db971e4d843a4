"""``ferrum transcribe`` end to end on the bundled Whisper tiny.en and real speech."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from audio_fixtures import DEV_CLIP, SPEECH_DIR, cut_short, read_reference
from speech_eval import corpus_wer

from executors.transcripts.exporters import parse_srt, transcript_from_json
from ferrum_cli.main import build_parser, main

SHORT_CLIP = SPEECH_DIR / "pocketsphinx" / "goforward.flac"


def test_parser_defaults_and_choices():
    args = build_parser().parse_args(["transcribe", "a.wav", "b.mp3"])
    assert args.files == ["a.wav", "b.mp3"] and args.fmt == "txt" and args.task == "transcribe"
    assert args.beam_size == 1 and not args.word_timestamps and not args.vad and args.device == "auto"
    assert not args.fast_long_files and build_parser().parse_args(["transcribe", "a.wav", "--fast-long-files"]
                                                                  ).fast_long_files
    with pytest.raises(SystemExit):
        build_parser().parse_args(["transcribe", "a.wav", "--format", "docx"])
    with pytest.raises(SystemExit):
        build_parser().parse_args(["transcribe"])  # at least one file


@pytest.mark.parametrize("batching", [[], ["--batch-size", "1"], ["--batch-size", "4"]],
                         ids=["files share batches, each whole", "each file alone", "files cut, pieces share batches"])
def test_srt_per_input_and_failures_reported_one_line_each(tmp_path, capsys, batching):
    inputs = tmp_path / "in"
    inputs.mkdir()
    clip = shutil.copy(DEV_CLIP, inputs / "austen.flac")
    (inputs / "notes.wav").write_text("not audio at all\n" * 20)
    short = shutil.copy(SHORT_CLIP, inputs / "short.flac")
    out = tmp_path / "out"

    code = main(["transcribe", str(clip), str(inputs / "notes.wav"), str(inputs / "missing.wav"), str(short),
                 "--format", "srt", "--output-dir", str(out), "--threads", "1", *batching])
    captured = capsys.readouterr()

    assert code == 1
    assert sorted(p.name for p in out.iterdir()) == ["austen.srt", "short.srt"]
    failures = [line for line in captured.err.splitlines() if line.startswith("ferrum transcribe:")]
    assert len(failures) == 2
    assert "notes.wav" in failures[0] and "missing.wav" in failures[1]
    assert "7.1/7.1 s" in captured.err  # the progress bar followed the executor's on_progress
    assert captured.out.split() == [str(out / "austen.srt"), str(out / "short.srt")]

    cues = parse_srt((out / "austen.srt").read_text(encoding="utf-8"))
    assert cues and cues[-1][1] <= 7.2
    hypothesis = " ".join(text for _, _, text in cues)
    assert corpus_wer([read_reference(DEV_CLIP)], [hypothesis]) < 20.0


def test_several_files_share_batches_unless_told_otherwise():
    from ferrum_cli.transcribe_cmd import files_share_batches, transcribe_options

    def chosen(*argv):
        args = build_parser().parse_args(["transcribe", *argv])
        options = files_share_batches(transcribe_options(args), args)
        return options.batch_windows, options.split_files

    assert chosen("a.wav", "b.wav") == (8, False)     # same text as one after another, in shared batches
    assert chosen("a.wav") == (1, True)
    assert chosen("a.wav", "b.wav", "--batch-size", "1") == (1, True)
    assert chosen("a.wav", "b.wav", "--batch-size", "4") == (4, True)
    assert chosen("a.wav", "b.wav", "--vad") == (1, True)
    assert chosen("a.wav", "b.wav", "--fast-long-files")[1] is True


def test_json_with_word_timestamps(tmp_path, capsys):
    code = main(["transcribe", str(SHORT_CLIP), "--format", "json", "--word-timestamps", "--output-dir",
                 str(tmp_path), "--threads", "1", "--quiet"])
    assert code == 0
    assert "%|" not in capsys.readouterr().err  # --quiet: no bar
    data = json.loads((tmp_path / "goforward.json").read_text(encoding="utf-8"))
    assert data["language"] == "english" and data["duration"] == pytest.approx(2.79, abs=0.05)
    assert corpus_wer([read_reference(SHORT_CLIP)], [data["text"]]) < 30.0
    words = data["words"]
    assert len(words) >= 3 and all(0 <= w["start"] <= w["end"] <= 3.0 for w in words)
    assert transcript_from_json(data).segments[0].words


def test_a_cut_short_file_is_transcribed_up_to_the_break_with_a_warning(tmp_path, capsys):
    cut = cut_short(DEV_CLIP, tmp_path / "interrupted.flac")
    out = tmp_path / "out"
    code = main(["transcribe", str(cut), "--output-dir", str(out), "--threads", "1", "--quiet", "--no-history"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = (out / "interrupted.txt").read_text(encoding="utf-8").lower()
    assert "dashwood" in text and "leisure" in text and "prudently" not in text, text
    warnings = [line for line in captured.err.splitlines() if line.startswith("ferrum transcribe: warning:")]
    assert len(warnings) == 1 and "interrupted.flac" in warnings[0] and "cut short" in warnings[0], captured.err


def test_silence_and_noise_files_come_out_empty(tmp_path, capsys):
    import numpy as np
    import soundfile as sf

    rate = 16000
    sf.write(tmp_path / "silence.wav", np.zeros(120 * rate, np.float32), rate)
    noise = np.random.default_rng(3).standard_normal(60 * rate) * 0.003
    sf.write(tmp_path / "noise.wav", noise.astype(np.float32), rate)
    out = tmp_path / "out"
    code = main(["transcribe", str(tmp_path / "silence.wav"), str(tmp_path / "noise.wav"), "--format", "json",
                 "--output-dir", str(out), "--threads", "1", "--quiet", "--no-history"])
    assert code == 0, capsys.readouterr().err
    for name in ("silence.json", "noise.json"):
        data = json.loads((out / name).read_text(encoding="utf-8"))
        assert data["segments"] == [] and data["text"] == "", data["text"]


@pytest.mark.parametrize("mode", [["--batch-size", "4"], ["--fast-long-files"]], ids=["windows", "speech chunks"])
def test_files_sharing_batches_each_get_a_history_record_with_segments(tmp_path, capsys, mode):
    from executors.transcripts.history import TranscriptHistory

    inputs = tmp_path / "in"
    inputs.mkdir()
    clip = shutil.copy(DEV_CLIP, inputs / "austen.flac")
    corrupt = inputs / "corrupt.flac"
    corrupt.write_bytes(b"fLaC" + bytes(range(256)) * 8)
    short = shutil.copy(SHORT_CLIP, inputs / "short.flac")
    code = main(["transcribe", str(clip), str(corrupt), str(short), *mode,
                 "--output-dir", str(tmp_path / "out"), "--threads", "1", "--quiet"])
    assert code == 1, capsys.readouterr().err

    with TranscriptHistory() as history:  # the data folder's, as the command's
        entries = {Path(e.source).name: e for e in history.list() if e.source.startswith(str(inputs))}
        assert sorted(entries) == ["austen.flac", "corrupt.flac", "short.flac"]
        assert entries["corrupt.flac"].status == "failed" and entries["corrupt.flac"].error
        for name, clip_path in (("austen.flac", DEV_CLIP), ("short.flac", SHORT_CLIP)):
            record = history.load(entries[name].id)
            assert record.status == "done" and record.transcript.segments
            hypothesis = " ".join(s.text for s in record.transcript.segments)
            assert corpus_wer([read_reference(clip_path)], [hypothesis]) < 30.0
