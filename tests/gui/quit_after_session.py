"""``python quit_after_session.py CLIP``: start the real app (``ferrum_gui.app.main``), use every panel,
then quit through File → Quit. Run by test_shutdown.py in a process of its own, with faulthandler on.

The session: transcribe CLIP, search for a word of it, dictate it from the file (no microphone
needed) and save that dictation when quitting asks, look at the Monitor. Hours of use are then
condensed into what they do to PySide6's reference counts: a signal emitted and a widget updated
``REPEATS`` times each (the host's status poll alone, twice a second, makes about 40,000 of each an
hour).
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from ferrum_gui.app import create_application, main
from ferrum_gui.shell.main_window import MainWindow

REPEATS = 200_000


async def _until(predicate, what: str, timeout: float = 300.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        await asyncio.sleep(0.02)


async def run(clip: Path) -> None:
    """The session; a failure ends the process with status 3 instead of leaving the app open."""
    try:
        await session(clip)
    except BaseException:  # noqa: BLE001 - reported, then the process ends
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(3)


async def session(clip: Path) -> None:
    window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow))
    host = window.host
    await host.start()

    transcribe = window.show_panel("transcribe")
    finished = []
    host.jobFinished.connect(lambda job_id, result: finished.append(result))
    transcribe.enqueue([clip])
    await _until(lambda: finished and not transcribe.is_busy(), "the transcript")
    print(f"transcribed: {finished[0].text.strip()}", flush=True)

    search = window.show_panel("search")
    hits = await search.search(finished[0].text.split()[-1].strip(".,"))
    print(f"search hits: {len(hits)}", flush=True)

    dictation = window.show_panel("dictation")
    dictation.start_file(clip, speed=0)
    await _until(lambda: dictation.state == "idle" and dictation.sessions, "the dictation")
    print(f"dictated: {' '.join(dictation.committed)}", flush=True)

    monitor = window.show_panel("monitor")
    await asyncio.sleep(1.5)  # the plots draw, the tables fill
    for _ in range(REPEATS):
        host.sample.emit("memory_mb", 100.0)
        monitor.plots.update()
    print("long session condensed", flush=True)

    window.quit_action.trigger()
    await _until(lambda: dictation.discard_question is not None, "the question about unsaved dictation", 10)
    dictation.discard_question.button(QMessageBox.StandardButton.Save).click()  # then it quits


if __name__ == "__main__":
    create_application(sys.argv[:1])
    QTimer.singleShot(0, lambda: asyncio.ensure_future(run(Path(sys.argv[1]))))
    sys.exit(main(["--new-instance"]))
