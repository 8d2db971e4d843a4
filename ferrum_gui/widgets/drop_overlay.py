"""The highlight shown while files are dragged over the window: a tinted pane with a dashed edge
and a line saying what a drop would do. It never takes mouse events."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import QWidget


class DropOverlay(QWidget):
    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.text = ""
        self.hide()
        parent.installEventFilter(self)

    def show_for(self, text: str) -> None:
        self.text = text
        self.setGeometry(self.parentWidget().rect())
        self.raise_()
        self.show()
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(self.parentWidget().rect())
        return False

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = self.palette().color(QPalette.ColorRole.Highlight)
        tint = QColor(accent)
        tint.setAlpha(40)
        rect = QRectF(self.rect()).adjusted(10, 10, -10, -10)
        painter.setBrush(tint)
        painter.setPen(QPen(accent, 2, Qt.PenStyle.DashLine))
        painter.drawRoundedRect(rect, 12, 12)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.text)
        painter.end()
