"""``ferrum history``: what ``ferrum transcribe`` transcribed is in the history and exports again."""

from __future__ import annotations

import json

from audio_fixtures import SPEECH_DIR

from executors.transcripts.exporters import parse_srt
from ferrum_cli.main import build_parser, main

CLIP = SPEECH_DIR / "pocketsphinx" / "goforward.flac"


def test_cli_transcript_lands_in_the_history_and_exports_again(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FERRUM_DATA_DIR", str(tmp_path / "data"))
    assert main(["transcribe", str(CLIP), "-o", str(tmp_path / "out"), "--threads", "1", "--quiet"]) == 0
    written = (tmp_path / "out" / "goforward.txt").read_text(encoding="utf-8").strip()
    capsys.readouterr()

    assert main(["history", "list", "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["source"] == str(CLIP) and entry["status"] == "done" and entry["kind"] == "file"
    assert entry["model_id"] == "whisper-tiny.en" and entry["segment_count"] >= 1

    assert main(["history", "export", str(entry["id"]), "--format", "srt"]) == 0
    cues = parse_srt(capsys.readouterr().out)
    assert " ".join(text for _, _, text in cues).split() == written.split()
    assert cues[-1][1] <= 3.0

    assert main(["history", "show", str(entry["id"]), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["transcript"]["text"].split() == written.split() and shown["audio_path"] == str(CLIP)

    out = tmp_path / "again.vtt"
    assert main(["history", "export", str(entry["id"]), "-o", str(out)]) == 0  # format from the extension
    assert out.read_text(encoding="utf-8").startswith("WEBVTT")

    assert main(["transcribe", str(CLIP), "-o", str(tmp_path / "out2"), "--threads", "1", "-q", "--no-history"]) == 0
    capsys.readouterr()
    assert main(["history", "list", "--json"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)] == [entry["id"]]  # --no-history kept it out

    assert main(["history", "delete", str(entry["id"])]) == 0
    capsys.readouterr()
    assert main(["history", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["history", "show", str(entry["id"])]) == 1
    assert "not in the history" in capsys.readouterr().err


def test_history_parser():
    args = build_parser().parse_args(["history", "export", "7", "--format", "vtt"])
    assert args.id == 7 and args.fmt == "vtt" and args.output is None
    assert build_parser().parse_args(["history", "delete", "1", "2"]).ids == [1, 2]
