"""Quitting after a long session ends the process cleanly: exit status 0 and no "Fatal Python error"
(PySide6 6.12 on Python 3.11 used to wear away the references of True and None until the interpreter
failed as it finalised; see ferrum_gui/shell/singletons.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("quit_after_session.py")
CLIP = "pocketsphinx/cards_001.flac"


def _quit_after_session(tmp_path: Path, clip: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FERRUM_DATA_DIR=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-X", "faulthandler", str(DRIVER), str(clip)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def _assert_clean(out: subprocess.CompletedProcess) -> None:
    assert "Fatal Python error" not in out.stderr, out.stderr[-4000:]
    assert out.returncode == 0, out.stderr[-4000:]
    for step in ("transcribed: ", "search hits: ", "dictated: ", "long session condensed"):
        assert step in out.stdout, (step, out.stdout, out.stderr[-4000:])


def test_quit_after_a_session_on_every_panel_is_clean(tmp_path, speech_dir):
    from executors.transcripts.history import DB_NAME, TranscriptHistory

    out = _quit_after_session(tmp_path, speech_dir / CLIP)
    _assert_clean(out)
    assert "of clubs" in out.stdout.lower()
    history = TranscriptHistory(tmp_path / "data" / DB_NAME)
    try:  # the transcript, and the dictation saved on the way out
        assert len(history.list()) == 2
    finally:
        history.close()


@pytest.mark.slow  # three more quits; the test above is the quick tier's
def test_quit_is_clean_every_time(tmp_path, speech_dir):
    for run in range(3):
        _assert_clean(_quit_after_session(tmp_path / str(run), speech_dir / CLIP))
