"""Screenshots of every panel with real content, saved to docs/screenshots/.

Transcribes a dev-set clip with the bundled Whisper model, indexes newsgroups posts with the bundled
MiniLM and searches them, then shows the monitor after that work, the preferences and a notification.
Run it on a real display server:

    xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/screenshots.py [--theme dark]

It uses a throw-away data folder and settings file, so your own history and index are untouched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"   # the repository's own clips and posts (see its README)
CLIP = DATA / "speech" / "pocketsphinx" / "librivox_sense_and_sensibility_01_austen_64kb-0880.flac"
POSTS = DATA / "text" / "newsgroups_mini.jsonl"
QUERY = "launching a satellite into orbit"


def write_posts(folder: Path, per_label: int = 30) -> Path:
    counts: dict[str, int] = {}
    for line in POSTS.read_text(encoding="utf-8").splitlines():
        post = json.loads(line)
        if counts.get(post["label"], 0) < per_label:
            counts[post["label"]] = counts.get(post["label"], 0) + 1
            name = "".join(c if c.isalnum() else "-" for c in post["subject"].lower())[:40].strip("-")
            (folder / f"{name or 'post'}-{post['id']}.txt").write_text(f"{post['subject']}\n\n{post['body']}",
                                                                       encoding="utf-8")
    return folder


def joined_speech(path: Path) -> Path:
    """A few LibriVox sentences with short pauses, as one 16 kHz WAV (a stand-in for a speaker)."""
    import numpy as np
    import soundfile as sf

    pieces = []
    for clip in sorted((DATA / "speech" / "pocketsphinx").glob("librivox_*.flac"))[:5]:
        audio, rate = sf.read(str(clip), dtype="float32")
        pieces += [audio, np.zeros(int(0.9 * rate), dtype="float32")]
    sf.write(str(path), np.concatenate(pieces), rate)
    return path


async def until(predicate, timeout: float = 300.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise TimeoutError("the app did not reach the expected state in time")
        await asyncio.sleep(0.05)


async def settle(seconds: float = 0.6) -> None:
    await asyncio.sleep(seconds)


def save(widget, out: Path, name: str, suffix: str) -> None:
    path = out / f"{name}{suffix}.png"
    widget.grab().save(str(path))
    print(f"saved {path}")


async def capture_speakers(window, host, out: Path, suffix: str, work: Path) -> None:
    """A three-voice conversation joined from dev clips, transcribed with the Speakers option."""
    import soundfile as sf

    from bench.conversations import conversation

    path = work / "conversation.wav"
    sf.write(str(path), conversation(["asterisk", "librivox", "cards"], n_turns=6, seed=1, root=DATA / "speech").audio, 16000)
    transcribe = window.show_panel("transcribe")
    transcribe.options_bar.speakers.setChecked(True)
    window.enqueue([path])
    await until(lambda: not transcribe.is_busy(), 900)
    await until(lambda: transcribe.current_record_id() is not None, 30)
    await settle(1.5)
    transcribe.view.rename_speaker("SPEAKER_01", "Marianne")
    await settle(1.0)
    save(window, out, "transcribe-speakers", suffix)
    transcribe.options_bar.speakers.setChecked(False)


async def capture(window, host, out: Path, suffix: str, work: Path, only: str | None = None) -> None:
    from ferrum_gui.shell.preferences import ModelsPage

    await host.start()
    await settle()
    if only == "speakers":
        await capture_speakers(window, host, out, suffix, work)
        return

    transcribe = window.show_panel("transcribe")
    window.enqueue([CLIP])
    await until(lambda: not transcribe.is_busy())
    await until(lambda: transcribe.current_record_id() is not None, 30)
    await settle(1.0)
    save(window, out, "transcribe", suffix)
    await capture_speakers(window, host, out, suffix, work)

    search = window.show_panel("search")
    folder = write_posts(work / "newsgroups")
    search.add_sources([str(folder)], index=True)
    await until(lambda: search.is_indexing(), 30)
    await until(lambda: not search.is_indexing())
    search.query.setText(QUERY)
    search.search_now()
    await until(lambda: search.results.count() > 0, 60)
    await settle(1.5)
    save(window, out, "search", suffix)

    if "dictation" in window.panel_keys():  # no microphone here: play joined dev clips in real time
        dictation = window.show_panel("dictation")
        dictation.start_file(str(joined_speech(work / "dictation.wav")), speed=1.0)
        await until(lambda: len(dictation.latencies) >= 3 or (len(dictation.latencies) >= 2 and dictation.tentative_text()), 120)
        save(window, out, "dictation", suffix)
        dictation.stop()
        await settle(2.0)

    monitor = window.show_panel("monitor")
    await host.embed([QUERY, QUERY])  # a cache hit for the cache table
    await settle(2.5)
    save(window, out, "monitor", suffix)
    bar = monitor.scroll.verticalScrollBar()
    bar.setValue(bar.maximum())
    await settle()
    save(window, out, "monitor-tables", suffix)
    bar.setValue(0)
    size = window.size()
    window.resize(window.minimumSize())  # the smallest window the app allows
    await settle(1.5)
    save(window, out, "monitor-min", suffix)
    window.resize(size)
    await settle()

    dialog = window.show_preferences()
    await until(lambda: dialog.page(ModelsPage).device.count() > 1, 30)
    for row, page in enumerate(dialog.pages):
        dialog.nav.setCurrentRow(row)
        await settle()
        slug = "" if row == 0 else "-" + "".join(c if c.isalnum() else "-" for c in page.title.lower())
        save(dialog, out, f"preferences{slug}", suffix)
    dialog.close()

    bad = work / "meeting-notes.wav"
    bad.write_bytes(b"not really audio" * 64)
    window.enqueue([bad])
    await until(lambda: not transcribe.is_busy())
    await settle()
    save(window, out, "notification", suffix)


def open_app(work: Path, width: int, height: int):
    """The QApplication on a qasync loop, a host and the main window with throw-away settings, shown."""
    import qasync
    from PySide6.QtCore import QSettings

    from ferrum_gui.app import create_application
    from ferrum_gui.host.executor_host import ExecutorHost
    from ferrum_gui.shell.main_window import MainWindow

    app = create_application(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    host = ExecutorHost()
    window = MainWindow(host, QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat))
    window.resize(width, height)
    window.show()
    return loop, host, window


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--theme", choices=["system", "light", "dark"], default="system")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--only", choices=["speakers"], default=None, help="capture only this screen")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ferrum-screenshots-"))
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", FERRUM_DATA_DIR=str(work / "data"))
    if args.theme != "system":
        os.environ["FERRUM_THEME"] = args.theme
    (work / "newsgroups").mkdir()
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))

    loop, host, window = open_app(work, 1360, 860)
    suffix = "" if args.theme in ("system", "light") else f"-{args.theme}"
    try:
        with loop:
            loop.run_until_complete(capture(window, host, args.out, suffix, work, args.only))
    finally:
        window.close()
        host.close(wait=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
