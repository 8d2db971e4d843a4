"""Speakers in the transcript view: one colour per speaker, drawn as a rounded label."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

# Hues far apart on the colour wheel in the order speakers appear; beyond them hues keep turning.
_HUES = (210, 20, 130, 280, 45, 170, 330, 90)
SPEAKER_ROLE = Qt.ItemDataRole.UserRole + 1   # the speaker's stable label (SPEAKER_00)


def speaker_color(index: int, dark: bool) -> QColor:
    """The colour of the ``index``-th speaker, readable under white text (light) or on dark rows."""
    hue = _HUES[index] if index < len(_HUES) else (index * 137) % 360
    return QColor.fromHsl(hue, 150, 95 if dark else 110)


class SpeakerLabelDelegate(QStyledItemDelegate):
    """Paints a cell's text as a coloured pill; the colour comes from the item's BackgroundRole."""

    def paint(self, painter: QPainter, option, index) -> None:
        color = index.data(Qt.ItemDataRole.BackgroundRole)
        text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        if option.state & QStyle.StateFlag.State_Selected:
            painter.fillRect(option.rect, option.palette.color(QPalette.ColorRole.Highlight))
        if not text or color is None:
            return
        color = QColor(color.color() if hasattr(color, "color") else color)
        metrics = option.fontMetrics
        width = min(metrics.horizontalAdvance(text) + 14, option.rect.width() - 6)
        height = metrics.height() + 4
        pill = QRectF(option.rect.x() + 3, option.rect.y() + 4, width, height)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawRoundedRect(pill, height / 2, height / 2)
        painter.setPen(QColor("white"))
        painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, metrics.elidedText(text, Qt.TextElideMode.ElideRight,
                                                                                 int(width) - 10))
        painter.restore()

    def sizeHint(self, option, index):
        hint = super().sizeHint(option, index)
        hint.setWidth(hint.width() + 20)
        hint.setHeight(max(hint.height(), option.fontMetrics.height() + 10))
        return hint
