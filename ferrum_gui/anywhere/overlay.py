"""``CaptionOverlay``: an always-on-top, frameless, translucent caption strip for talks and calls.

Shows the last words of the session, committed text in white and the tentative tail in grey,
with the session state in its corner.  Drag it anywhere; the grip at the bottom right resizes
it; it never takes the keyboard focus, so typing into another app goes on while it is shown.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QPoint, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizeGrip, QToolButton, QVBoxLayout, QWidget

TAIL_CHARS = 220              # at most this much text, and only what fits the strip's lines
_STATE_TEXT = {"idle": "Not listening", "starting": "Starting…", "listening": "Listening",
               "stopping": "Stopping…"}
_STATE_COLOUR = {"listening": "#e74c3c", "starting": "#f39c12", "stopping": "#f39c12"}


class CaptionOverlay(QWidget):
    closed = Signal()          # the user hid it with its × button

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint
                         | Qt.WindowType.WindowStaysOnTopHint | Qt.WindowType.WindowDoesNotAcceptFocus)
        self.setWindowTitle("Ferrum captions")
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setMinimumSize(320, 110)
        self.resize(760, 150)
        self.state = "idle"
        self._joiner = None      # a PhraseJoiner from the first committed phrase on
        self._tentative = ""
        self._drag: QPoint | None = None

        self.state_label = QLabel()
        self.state_label.setObjectName("CaptionState")
        close = QToolButton()
        close.setText("×")
        close.setToolTip("Hide the captions (Dictation panel or tray menu brings them back)")
        close.setAutoRaise(True)
        close.clicked.connect(self._close_clicked)
        header = QHBoxLayout()
        header.addWidget(self.state_label, 1)
        header.addWidget(close)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.caption.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom)
        font = QFont(self.font())
        font.setPointSizeF(max(16.0, font.pointSizeF() * 1.7))
        self.caption.setFont(font)
        grip = QSizeGrip(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 8, 8, 4)
        layout.addLayout(header)
        layout.addWidget(self.caption, 1)
        layout.addWidget(grip, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom)
        self.setStyleSheet("QLabel { color: #ffffff; background: transparent; }"
                           "QToolButton { color: #cccccc; font-size: 16px; border: none; }")
        self.set_state("idle")

    # ---- content --------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        if state == "starting" and self.state == "idle":
            self.clear()  # a new session starts with an empty strip
        self.state = state
        colour = _STATE_COLOUR.get(state, "#9e9e9e")
        self.state_label.setText(f'<span style="color:{colour}">●</span> '
                                 f'<span style="color:#cfcfcf">{_STATE_TEXT.get(state, state)}</span>')
        self._render()

    def on_event(self, event) -> None:
        from executors.dictation import Committed, Tentative

        if isinstance(event, Committed):
            if self._joiner is None:
                from executors.dictation.typing import PhraseJoiner  # imports the engine: not before a session

                self._joiner = PhraseJoiner()
            self._joiner.join(event.text)
            self._tentative = ""
        elif isinstance(event, Tentative):
            self._tentative = event.text.strip()
        else:
            return
        self._render()

    def clear(self) -> None:
        self._joiner = None
        self._tentative = ""
        self._render()

    def committed_text(self) -> str:
        return self._joiner.typed if self._joiner is not None else ""

    def tentative_text(self) -> str:
        return self._tentative

    def caption_text(self) -> str:
        return self.caption.text()

    def _render(self) -> None:
        committed = self.committed_text()
        budget = max(40, self._fitting_chars() - len(self._tentative))
        if len(committed) > budget:
            cut = committed.find(" ", len(committed) - budget)
            committed = "…" + committed[cut if cut >= 0 else len(committed) - budget:]
        body = html.escape(committed)
        if self._tentative:
            body += f' <span style="color:#a8a8a8"><i>{html.escape(self._tentative)}</i></span>'
        if not body:
            body = '<span style="color:#8a8a8a">Captions appear here while you dictate.</span>'
        self.caption.setText(body)

    def _fitting_chars(self) -> int:
        """About how many characters the caption shows without cutting its last line off."""
        metrics = QFontMetrics(self.caption.font())
        per_line = max(20, self.caption.width() // max(1, metrics.averageCharWidth()))
        lines = max(1, self.caption.height() // max(1, metrics.lineSpacing()))
        return min(TAIL_CHARS, int(per_line * lines * 0.8))  # 0.8: words wrap before the edge

    def resizeEvent(self, event):  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._render()

    # ---- look and movement ------------------------------------------------------------------
    def paintEvent(self, event):  # noqa: N802 - Qt override
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        path = QPainterPath()
        path.addRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 14, 14)
        painter.fillPath(path, QColor(18, 18, 22, 215))
        painter.end()

    def mousePressEvent(self, event):  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            handle = self.windowHandle()
            if handle is not None and handle.startSystemMove():  # the window manager moves it (Wayland too)
                return
            self._drag = event.globalPosition().toPoint() - self.frameGeometry().topLeft()

    def mouseMoveEvent(self, event):  # noqa: N802
        if self._drag is not None:
            self.move(event.globalPosition().toPoint() - self._drag)

    def mouseReleaseEvent(self, event):  # noqa: N802
        self._drag = None

    def _close_clicked(self) -> None:
        self.hide()
        self.closed.emit()
