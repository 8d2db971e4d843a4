"""A one-line label that gives way when space is short: it ends in "…" (or drops the middle of a
path) instead of being cut off, and its tooltip then holds the full text."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy

MIN_CHARS = 6  # the narrowest it gets: about this many characters and the ellipsis


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent=None, mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
                 tooltip: str | None = None):
        """``tooltip``: a fixed tooltip (else the full text, shown only while elided)."""
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self._tooltip = tooltip
        # Preferred: it shrinks down to minimumSizeHint() (a few characters), never to nothing
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        self._full = text or ""
        super().setText(self._full)
        self._update_tooltip()
        self.updateGeometry()
        self.update()

    def full_text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """What is painted at the current width."""
        return self.fontMetrics().elidedText(self._full, self._mode, max(0, self.contentsRect().width()))

    def is_elided(self) -> bool:
        return self.shown_text() != self._full

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        margins = self.contentsMargins()
        return QSize(metrics.horizontalAdvance(self._full) + margins.left() + margins.right() + 2,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        width = min(self.sizeHint().width(), metrics.horizontalAdvance("M" * MIN_CHARS + "…"))
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_tooltip()

    def _update_tooltip(self) -> None:
        if self._tooltip is not None:
            self.setToolTip(self._tooltip)
        else:
            self.setToolTip(self._full if self.is_elided() else "")

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown_text(), self.foregroundRole())
        painter.end()

