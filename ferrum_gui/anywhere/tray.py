"""``DictationTray``: the tray icon with the dictation state and a menu to start/stop it, switch
typing and captions, show the window or quit.  Left click shows the window; middle click
starts or stops dictation."""

from __future__ import annotations

from PySide6.QtCore import QObject, QPointF, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QPainter
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from .. import theme

_STATE_TEXT = {"idle": "not listening", "starting": "starting…", "listening": "listening",
               "stopping": "stopping…"}


def badged_icon(base: QIcon, colour: str, size: int = 64) -> QIcon:
    """``base`` with a coloured dot in its lower right corner (the state, readable at 16 px)."""
    pixmap = base.pixmap(size, size)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor("#ffffff"))
    painter.setBrush(QColor(colour))
    radius = size * 0.2
    painter.drawEllipse(QPointF(size - radius - 1, size - radius - 1), radius, radius)
    painter.end()
    return QIcon(pixmap)


class DictationTray(QObject):
    toggleRequested = Signal()
    showWindowRequested = Signal()
    quitRequested = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.state = "idle"
        self.chord = ""
        self._icons = {"idle": theme.app_icon(), "listening": badged_icon(theme.app_icon(), "#e74c3c"),
                       "busy": badged_icon(theme.app_icon(), "#f39c12")}
        self.menu = QMenu()
        self.status_action = self.menu.addAction("")
        self.status_action.setEnabled(False)
        self.toggle_action = self.menu.addAction("Start dictation")
        self.toggle_action.triggered.connect(lambda: self.toggleRequested.emit())
        self.menu.addSeparator()
        self.typing_action = self._checkable("Type into the focused app")
        self.captions_action = self._checkable("Show captions")
        self.menu.addSeparator()
        self.menu.addAction("Show Ferrum Desktop").triggered.connect(lambda: self.showWindowRequested.emit())
        self.menu.addAction("Quit").triggered.connect(lambda: self.quitRequested.emit())
        self.icon = QSystemTrayIcon(self._icons["idle"], self)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.set_state("idle")

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def _checkable(self, text: str) -> QAction:
        action = self.menu.addAction(text)
        action.setCheckable(True)
        return action

    def set_chord(self, chord: str) -> None:
        self.chord = chord
        self.set_state(self.state)

    def set_state(self, state: str) -> None:
        self.state = state
        running = state != "idle"
        key = "idle" if not running else "listening" if state == "listening" else "busy"
        self.icon.setIcon(self._icons[key])
        hint = f" ({self.chord})" if self.chord else ""
        self.status_action.setText(f"Dictation: {_STATE_TEXT.get(state, state)}")
        self.toggle_action.setText(("Stop dictation" if running else "Start dictation") + hint)
        self.toggle_action.setEnabled(state in ("idle", "starting", "listening"))
        self.icon.setToolTip(f"Ferrum Desktop — dictation {_STATE_TEXT.get(state, state)}")

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def _activated(self, reason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.showWindowRequested.emit()
        elif reason == QSystemTrayIcon.ActivationReason.MiddleClick:
            self.toggleRequested.emit()

    def close(self) -> None:
        self.icon.hide()
        self.icon.setContextMenu(None)
        self.menu.deleteLater()
