"""Screenshots of dictating into another app, saved to docs/screenshots/anywhere-*.png.

On a real X display (run it under Xvfb): an xterm has the keyboard; the global shortcut (sent as
a real key chord by xdotool) starts dictation in the hidden app; speech played into a private
PulseAudio null sink (the "microphone") is typed into the xterm while the caption overlay shows
it.  Then the Dictation panel with its switches, the tray menu and the preferences page.

    xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/screenshots_anywhere.py

Uses a throw-away data folder and settings file; ends every process it started.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.screenshots import joined_speech, open_app, save, settle, until  # noqa: E402

CHORD = "Ctrl+Alt+Space"


def grab_screen(out: Path, name: str) -> None:
    from PySide6.QtGui import QGuiApplication

    path = out / f"{name}.png"
    QGuiApplication.primaryScreen().grabWindow(0).save(str(path))  # the whole X screen, other apps too
    print(f"saved {path.relative_to(ROOT)}")


async def capture(window, host, out: Path, work: Path, pulse, xterm) -> None:
    from ferrum_gui.anywhere.settings_page import DictateAnywherePage

    await host.start()
    anywhere = window.anywhere
    panel = window.show_panel("dictation")
    panel.typing.set_enabled(True)
    anywhere.captions_switch.setChecked(True)
    anywhere.overlay.setGeometry(430, 700, 760, 150)
    await until(lambda: panel.device.count() > 0, 60)
    window.hide()  # out of the way (a bare X server has no window manager to minimise to)
    await settle(1.0)
    xterm.focus()
    xterm.server.xdotool("key", "ctrl+alt+space")  # the global shortcut, pressed "in" the xterm
    await until(lambda: panel.state == "listening", 60)
    player = pulse.play_async(joined_speech(work / "dictation.wav"))
    try:
        await until(lambda: len(panel.latencies) >= 3 and panel.tentative_text(), 180)
        grab_screen(out, "anywhere-overlay")
        await until(lambda: player.poll() is not None, 120)  # the speech is over: finish its last words
        await until(lambda: len(panel.latencies) >= 5, 60)
        await until(lambda: panel.typing.session is not None and not panel.typing.session.pending, 60)
        xterm.server.xdotool("key", "ctrl+alt+space")
        await until(lambda: panel.state == "idle", 60)
    finally:
        player.terminate()
    window.show()
    await settle(1.0)
    save(window, out, "anywhere-panel", "")
    menu = anywhere.tray.menu
    menu.popup(window.geometry().center())
    await settle()
    save(menu, out, "anywhere-tray-menu", "")
    menu.hide()
    dialog = window.show_preferences()
    dialog.nav.setCurrentRow(next(i for i, p in enumerate(dialog.pages) if isinstance(p, DictateAnywherePage)))
    await settle()
    save(dialog, out, "anywhere-preferences", "")
    dialog.close()


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="ferrum-screenshots-"))
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", FERRUM_DATA_DIR=str(work / "data"),
                      QT_QPA_PLATFORM="xcb")
    out = ROOT / "docs" / "screenshots"
    from tests.pulse import start_pulse
    from tests.x11 import XServer, open_target

    pulse, why = start_pulse()
    if pulse is None:
        sys.exit(f"PulseAudio is needed for the virtual microphone: {why}")
    os.environ.update({k: pulse.env[k] for k in ("XDG_RUNTIME_DIR", "PULSE_RUNTIME_PATH")})
    xterm = open_target(XServer(os.environ["DISPLAY"], None), work / "typed.txt", "92x24+120+80", 14)
    loop, host, window = open_app(work, 1200, 760)
    try:
        with loop:
            loop.run_until_complete(capture(window, host, out, work, pulse, xterm))
        print(f"typed into the xterm: {xterm.text()!r}")
    finally:
        window.close()
        host.close(wait=False)
        xterm.close()
        pulse.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
