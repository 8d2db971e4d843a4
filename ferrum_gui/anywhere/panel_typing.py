"""``PanelTyping``: the Dictation panel's "Type into the focused app" switch and what it does.

While the switch is on and a session runs, every committed phrase the panel receives is typed
into whichever app has the keyboard (``executors.dictation.typing``), on the typing session's own
thread.  Phrases committed while Ferrum itself has the keyboard wait until another app takes it
(typing into our own window would only echo the panel).  A failure stops typing for the session,
says why in the panel and through the app's one failure path; the text stays in the panel.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox

from executors.core.errors import FerrumError

_NO_FOCUS_PLATFORMS = ("offscreen", "minimal")   # no real keyboard focus to compare with


class PanelTyping(QObject):
    enabledChanged = Signal(bool)
    typingFailed = Signal(object)     # FerrumError, on the GUI thread
    _failed = Signal(object)          # from the typing thread
    _copy = Signal(str)               # clipboard fallback, from the typing thread

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.session = None
        self.held: list = []          # committed events waiting for another app to take the keyboard
        self.switch = QCheckBox("Type into the focused app")
        self.switch.setToolTip("Type each committed phrase into whichever app has the keyboard (never the "
                               "greyed, tentative words). X11: xdotool; Wayland: wtype or ydotool; "
                               "macOS/Windows: pynput; elsewhere the text goes to the clipboard.")
        self.switch.toggled.connect(self._switched)
        panel.stateChanged.connect(self._on_state)
        panel.eventReceived.connect(self._on_event)
        self._failed.connect(self._on_failed)
        self._copy.connect(lambda text: QGuiApplication.clipboard().setText(text))
        QGuiApplication.instance().applicationStateChanged.connect(self._app_state_changed)
        self._app_watch = True

    @property
    def enabled(self) -> bool:
        return self.switch.isChecked()

    def set_enabled(self, on: bool) -> None:
        self.switch.setChecked(on)

    # ---- session ------------------------------------------------------------------------------
    def _switched(self, on: bool) -> None:
        if on and self.panel.state == "listening":
            self._begin()
        elif not on:
            self._end()
        self.enabledChanged.emit(on)

    def _on_state(self, state: str) -> None:
        if state == "listening" and self.enabled:
            self._begin()
        elif state == "idle":
            self._end()

    def _begin(self) -> None:
        if self.session is not None:
            return
        from executors.dictation.typing import TypingOptions, TypingSession, make_typist

        try:
            typist = make_typist(TypingOptions(), copy=self._copy.emit)
        except FerrumError as exc:
            self._on_failed(exc)
            return
        self.session = TypingSession(typist, on_error=self._failed.emit)
        self.panel.show_message(typist.note or f"Typing committed text into the focused app ({typist.name}).")

    def _end(self) -> None:
        session, self.session = self.session, None
        if self.held:
            self.panel.show_message(f"{len(self.held)} phrase(s) were not typed because Ferrum had the keyboard "
                                    "focus; they are in the panel (Copy all).")
            self.held = []
        if session is not None:
            session.close(wait=True, timeout=15)
            if session.error is not None:  # keep saying so after the panel's "Stopped: …" summary
                self.panel.show_message(f"Typing stopped: {session.error}")

    # ---- events (GUI thread) ---------------------------------------------------------------
    def _on_event(self, event) -> None:
        if self.session is None:
            return
        from executors.dictation import Committed

        if not isinstance(event, Committed):
            return
        if self._we_have_the_keyboard():
            if not self.held:
                self.panel.show_message("Typing waits until another app has the keyboard: click into the app "
                                        "to type into.")
            self.held.append(event)
            return
        self._release_held()
        self.session.feed(event)

    def _app_state_changed(self, state) -> None:
        if state != Qt.ApplicationState.ApplicationActive and self.session is not None:
            self._release_held()

    def _release_held(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self.session.feed(event)

    @staticmethod
    def _we_have_the_keyboard() -> bool:
        return (QGuiApplication.platformName() not in _NO_FOCUS_PLATFORMS
                and QGuiApplication.applicationState() == Qt.ApplicationState.ApplicationActive)

    def _on_failed(self, exc: FerrumError) -> None:
        self.panel.show_message(f"Typing stopped: {exc}")
        self.typingFailed.emit(exc)
        if not getattr(exc, "_ferrum_reported", False):
            exc._ferrum_reported = True
            self.panel.host.failure.emit(exc)

    def shutdown(self) -> None:
        if self._app_watch:
            self._app_watch = False
            QGuiApplication.instance().applicationStateChanged.disconnect(self._app_state_changed)
        self._end()
