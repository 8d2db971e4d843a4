"""Empty-state text painted inside an item view while it has no rows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView


def paint_placeholder(view: QAbstractItemView, text: str) -> None:
    """Call from a view's ``paintEvent`` when the view is empty."""
    painter = QPainter(view.viewport())
    try:
        color = view.palette().color(QPalette.ColorRole.PlaceholderText)
        painter.setPen(color)
        rect = view.viewport().rect().adjusted(16, 16, -16, -16)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
    finally:
        painter.end()


class PlaceholderMixin:
    """Mixin for QAbstractItemView subclasses: set ``placeholder_text``; drawn when empty."""

    placeholder_text = ""

    def is_empty(self) -> bool:
        model = self.model()
        return model is None or model.rowCount() == 0

    def paintEvent(self, event):
        super().paintEvent(event)
        if self.placeholder_text and self.is_empty():
            paint_placeholder(self, self.placeholder_text)

    def set_placeholder(self, text: str) -> None:
        self.placeholder_text = text
        self.viewport().update()
