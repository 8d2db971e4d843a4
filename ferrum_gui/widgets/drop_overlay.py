"""Taking files dropped on a widget: ``FileDrops`` (the drag and drop handlers) and ``DropOverlay``,
the highlight shown while files are dragged over it: a tinted pane with a dashed edge and a line saying
what a drop would do. The overlay never takes mouse events."""

from __future__ import annotations

from pathlib import Path

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


def local_paths(mime) -> list[str]:
    """The local files and folders a drag carries."""
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []


def drop_summary(paths: list[str]) -> str:
    """"2 files and 1 folder"."""
    folders = sum(Path(p).is_dir() for p in paths)
    files = len(paths) - folders
    parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((files, "file"), (folders, "folder")) if n]
    return " and ".join(parts)


class FileDrops:
    """Mixed into a QWidget (before the Qt class) that takes files and folders dropped on it. The widget
    calls ``setAcceptDrops(True)``, sets ``drop_overlay`` and gives ``drop_text(paths)`` (what a drop would
    do; "" when it leaves them to a parent widget) and ``take_drop(paths) -> bool``."""

    drop_overlay: DropOverlay

    def drop_text(self, paths: list[str]) -> str:
        raise NotImplementedError

    def take_drop(self, paths: list[str]) -> bool:
        raise NotImplementedError

    def dragEnterEvent(self, event):
        text = self.drop_text(local_paths(event.mimeData()))
        if text:
            event.acceptProposedAction()
            self.drop_overlay.show_for(text)
        else:
            event.ignore()  # Qt offers it to the parent widgets

    def dragMoveEvent(self, event):
        if self.drop_text(local_paths(event.mimeData())):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragLeaveEvent(self, event):
        self.drop_overlay.hide()
        super().dragLeaveEvent(event)

    def dropEvent(self, event):
        self.drop_overlay.hide()
        if self.take_drop(local_paths(event.mimeData())):
            event.acceptProposedAction()
