"""``ferrum dictate --from-file WAV --speed 1 --type --json`` on a private Xvfb display: the focused
xterm receives the session's committed text phrase by phrase while it runs, and nothing else;
the JSON events still go to stdout."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from executors.dictation.typing import PhraseJoiner
from tests.audio_fixtures import joined_clips
from tests.speech_eval import corpus_wer, normalize
from tests.x11 import target, xserver  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[1]


def words(text: str) -> list[str]:
    return normalize(text).split()


@pytest.mark.slow  # 20 s of audio in real time; test_dictate_anywhere.py types through the same session quickly
def test_dictate_types_the_committed_text_into_the_focused_xterm(xserver, target, tmp_path):
    wav, reference = joined_clips(tmp_path / "speech.wav")
    env = dict(xserver.env, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "ferrum_cli.main", "dictate", "--from-file", str(wav),
                                "--speed", "1", "--type", "--json"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    growth: list[tuple[float, int]] = []   # (time, characters in the xterm) whenever it changes
    lines: list[tuple[float, dict]] = []

    def read_events():
        for line in process.stdout:
            lines.append((time.monotonic(), json.loads(line)))

    reader = threading.Thread(target=read_events, daemon=True)
    reader.start()
    while process.poll() is None:
        size = len(target.text())
        if not growth or growth[-1][1] != size:
            growth.append((time.monotonic(), size))
        time.sleep(0.05)
    reader.join(10)
    stderr = process.stderr.read()
    assert process.returncode == 0, stderr
    ended = time.monotonic()

    events = [e for _, e in lines]
    committed = [e["text"] for e in events if e["type"] == "committed"]
    assert events[-1]["type"] == "summary" and events[-1]["utterances"] >= 3
    assert len(committed) >= 3 and any(e["type"] == "tentative" and e["text"] for e in events)
    joiner = PhraseJoiner()
    expected = "".join(joiner.join(t) for t in committed)
    typed = target.text()
    print(f"\ncommitted phrases: {committed}\ntyped: {typed!r}")
    # the same words as the committed events (normalised), and the session did hear the clips
    similarity = difflib.SequenceMatcher(None, words(typed), words(expected), autojunk=False).ratio()
    assert similarity >= 0.98, (typed, expected)
    assert typed == expected  # in practice exactly the same characters
    assert corpus_wer([reference], [typed]) <= 25.0, typed
    # tentative text never arrives: every typed word was committed
    assert set(words(typed)) <= set(words(" ".join(committed)))
    # typed phrase by phrase while the session ran, not in one go at the end
    first_typed = next(t for t, n in growth if n > 0)
    first_committed = next(t for t, e in lines if e["type"] == "committed")
    assert first_typed < ended - 5.0, (growth, ended)
    assert len([n for _, n in growth if n > 0]) >= 3
    assert first_typed - first_committed < 3.0


def test_dictate_type_without_a_display_fails_before_loading_the_model(tmp_path, monkeypatch, capsys):
    from ferrum_cli.main import main

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    started = time.monotonic()
    code = main(["dictate", "--from-file", str(tmp_path / "never-read.wav"), "--type", "--json"])
    assert code == 1
    assert time.monotonic() - started < 20  # no model was loaded
    assert "no desktop session to type into" in capsys.readouterr().err


def test_when_typing_fails_the_events_still_carry_every_word(xserver, monkeypatch, capsys):
    """No window has the keyboard on the bare display: typing stops, stdout keeps the whole text."""
    from ferrum_cli.main import main
    from tests.audio_fixtures import DEV_CLIP, read_reference

    monkeypatch.setenv("DISPLAY", xserver.display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    code = main(["dictate", "--from-file", str(DEV_CLIP), "--speed", "0", "--type", "--json"])
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    committed = " ".join(e["text"] for e in events if e["type"] == "committed")
    assert code == 1
    assert "typing stopped: No window has the keyboard focus" in err and "not typed" in err
    assert events[-1]["type"] == "summary"
    assert corpus_wer([read_reference()], [committed]) <= 25.0, committed
