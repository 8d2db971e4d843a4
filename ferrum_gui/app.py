"""``ferrum-gui [FILES...]``: the only place that builds the QApplication and the qasync loop.

The window shows before anything heavy is imported; the host then loads the models in its worker
threads and FILES go to the Transcribe queue.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ORGANIZATION = "Ferrum"
APPLICATION = "Ferrum Desktop"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ferrum-gui", description="Ferrum Desktop: local speech-to-text and search")
    parser.add_argument("files", nargs="*", type=Path, help="audio or video files to transcribe")
    parser.add_argument("--panel", help="panel to open first (transcribe, search, monitor, …)")
    parser.add_argument("--new-instance", action="store_true",
                        help="start another window even when Ferrum Desktop is already running")
    parser.add_argument("--toggle-dictation", action="store_true",
                        help="start or stop dictation in the running app (or start the app dictating); "
                             "bind it to a desktop shortcut where the app cannot have a global one (Wayland)")
    # for tests and benchmarks: quit once the window is shown / once FILES are transcribed
    parser.add_argument("--quit-after-show", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quit-when-idle", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def create_application(argv: list[str]):
    """The QApplication with our identity, icon and theme (the one chosen in View → Theme)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from . import theme
    from .shell.singletons import make_singletons_immortal
    from .shell.window_menus import THEME_KEY

    make_singletons_immortal()  # before the first PySide6 call takes a reference it never gave
    app = QApplication.instance() or QApplication(argv)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setDesktopFileName(theme.APP_ID)
    app.setWindowIcon(theme.app_icon())
    theme.apply_theme(app, str(QSettings().value(THEME_KEY, "system")))
    return app


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import qasync
    from PySide6.QtCore import QSettings, QTimer

    from executors.core.logs import setup_file_logging

    from .api.server import start_api_server
    from .host.executor_host import ExecutorHost
    from .settings import HostSettings
    from .shell.about import app_version
    from .shell.instance import SHOW, TOGGLE_DICTATION, accept_later_launches, run_command, send_to_running
    from .shell.main_window import MainWindow
    from .watch.controller import start_watch_folder

    app = create_application(sys.argv[:1])
    single = not (args.new_instance or args.quit_after_show or args.quit_when_idle) or args.toggle_dictation
    command = TOGGLE_DICTATION if args.toggle_dictation else SHOW
    if single and send_to_running(command, args.files):  # a running app took the files and the command
        print(f"Ferrum Desktop is already running: handed it {len(args.files)} file(s)"
              + (" and the dictation toggle." if args.toggle_dictation else "."))
        return 0
    setup_file_logging(APPLICATION, app_version())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    qsettings = QSettings()
    host = ExecutorHost(HostSettings.load(qsettings))
    window = MainWindow(host, qsettings)
    window.show()
    if single:
        accept_later_launches(window)
    if args.panel and args.panel in window.panel_keys():
        window.show_panel(args.panel)
    shown_ms = (time.perf_counter() - started) * 1000
    if args.quit_after_show:  # used by tests and bench: report start-up and whether torch loaded early
        app.processEvents()
        print(f"window shown in {shown_ms:.0f} ms; torch imported: {'torch' in sys.modules}")
        host.close()
        return 0

    def begin() -> None:
        host.start()
        start_api_server(host, qsettings)  # when turned on in Preferences → API server
        start_watch_folder(host, qsettings)  # when turned on in Preferences → Watch folder
        window.enqueue(args.files)  # the queue says which paths do not exist
        if args.quit_when_idle:
            asyncio.ensure_future(_quit_when_idle(app, host, window))
        if args.toggle_dictation:
            run_command(window, TOGGLE_DICTATION)

    QTimer.singleShot(0, begin)
    quitting = asyncio.Event()
    app.aboutToQuit.connect(quitting.set)
    app.lastWindowClosed.connect(app.quit)
    with loop:
        loop.run_until_complete(quitting.wait())
        _shut_down(loop, host, window)
    app.shutdown()  # the QApplication goes now, not in whatever order the interpreter finalises
    return 0


def _shut_down(loop, host, window) -> None:
    """Quit in order while the interpreter is whole. The window has closed (its panels stopped
    dictation, its audio stream and playback); the API server stops taking requests; jobs are
    cancelled and the workers joined; then the window and its widgets are deleted."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from .api.server import stop_api_server

    loop.run_until_complete(stop_api_server(host))
    host.close()  # jobs see their cancel token within a decoding step
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


async def _quit_when_idle(app, host, window) -> None:
    await host.start()
    panel = window.panels.get("transcribe")
    while panel is not None and panel.is_busy():
        await asyncio.sleep(0.1)
    app.quit()


if __name__ == "__main__":
    sys.exit(main())
