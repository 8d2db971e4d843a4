"""Help menu content: the version, where the app keeps its data and logs, and the log folder itself."""

from __future__ import annotations

import html
import platform
from importlib import metadata

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

from executors.core.paths import data_dir, log_dir

DISTRIBUTION = "ferrum-desktop"


def app_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "development build"


def about_html() -> str:
    rows = [("Version", app_version()), ("Python", platform.python_version()),
            ("Qt", f"{qVersion()} (PySide6 {pyside_version})"), ("Data folder", str(data_dir())),
            ("Log folder", str(log_dir()))]
    table = "".join(f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return ("<h3>Ferrum Desktop</h3><p>Speech-to-text and semantic search that run entirely on your own "
            "machine: Whisper and BERT executors modelled on Ferrum's inference engine.</p>"
            f"<table>{table}</table>")


def show_about(parent: QWidget) -> QMessageBox:
    """The About box (window-modal, not blocking)."""
    box = QMessageBox(QMessageBox.Icon.NoIcon, "About Ferrum Desktop", about_html(), QMessageBox.StandardButton.Ok,
                      parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def open_log_folder() -> bool:
    """Show the log folder in the file manager; False when the desktop has nothing to open it with."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_dir())))
