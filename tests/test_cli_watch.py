"""``ferrum watch DIR`` as a user runs it: a line per file queued and finished, transcripts beside the
recordings, Ctrl+C stops cleanly, and a restart transcribes nothing twice."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from audio_fixtures import SPEECH_DIR, copy_slowly

from executors.transcripts.history import TranscriptHistory
from ferrum_cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
GO_FORWARD = SPEECH_DIR / "pocketsphinx" / "goforward.flac"
WELCOME = SPEECH_DIR / "asterisk" / "dir-welcome.flac"
GUARD_S = 300


def _ctrl_c_on() -> None:
    """In the child before it starts: Ctrl+C's default, which a shell's background job (``pytest &``)
    would otherwise pass on as ignored, so that the SIGINT below would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Watch:
    """``ferrum watch`` in a process of its own, its output lines read as they come."""

    def __init__(self, folder: Path, data: Path):
        env = dict(os.environ, FERRUM_DATA_DIR=str(data))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ferrum_cli.main", "watch", str(folder), "--output-beside", "--format", "srt",
             "--settle", "0.5", "--threads", "1"], cwd=ROOT, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_on)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, start: str) -> str:
        deadline = time.monotonic() + GUARD_S
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            self.seen.append(line)
            if line.startswith(start):
                return line

    def interrupt(self) -> tuple[int, str]:
        """Ctrl+C: the exit status and what went to stderr."""
        self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=GUARD_S)
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return self.process.returncode, err


def test_parser_takes_the_folder_and_the_transcription_options():
    args = build_parser().parse_args(["watch", "inbox", "--output-beside", "--format", "vtt", "--language", "en"])
    assert args.folder == Path("inbox") and args.output_beside and args.fmt == "vtt" and args.language == "en"
    assert args.settle is None and args.batch_size is None


def test_files_are_transcribed_once_and_ctrl_c_stops_also_across_a_restart(tmp_path):
    folder, data = tmp_path / "inbox", tmp_path / "data"
    folder.mkdir()
    shutil.copy(GO_FORWARD, folder / "before.flac")

    watch = Watch(folder, data)
    assert watch.expect("Watching ") == f"Watching {folder} (Ctrl+C stops)"
    assert watch.expect("done ") == f"done {folder / 'before.flac'} -> {folder / 'before.srt'}"
    copy_slowly(WELCOME, folder / "slow.flac", pieces=8, pause_s=0.2)
    assert watch.expect("done ") == f"done {folder / 'slow.flac'} -> {folder / 'slow.srt'}"
    code, err = watch.interrupt()
    assert code == 0 and "Stopped watching" in err and "Traceback" not in err
    assert [line.split()[0] for line in watch.seen[1:]] == ["queued", "done", "queued", "done"]
    assert "welcome" in (folder / "slow.srt").read_text(encoding="utf-8").lower()

    again = Watch(folder, data)
    again.expect("Watching ")
    time.sleep(3)  # six settle times: files already done are not queued again
    code, _ = again.interrupt()
    assert code == 0 and again.seen == [f"Watching {folder} (Ctrl+C stops)"]

    with TranscriptHistory(data / "history.sqlite3") as history:
        assert sorted(entry.source for entry in history.list()) == [str(folder / "before.flac"),
                                                                    str(folder / "slow.flac")]
