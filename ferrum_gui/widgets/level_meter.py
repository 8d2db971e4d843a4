"""A horizontal input level meter: RMS in dBFS (-60…0) with a slowly falling peak mark."""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

FLOOR_DB = -60.0


class LevelMeter(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.level = 0.0   # 0..1 on the dB scale
        self.peak = 0.0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Input level")

    def sizeHint(self) -> QSize:
        return QSize(200, 14)

    @staticmethod
    def to_fraction(rms: float) -> float:
        db = 20.0 * math.log10(max(rms, 1e-9))
        return min(1.0, max(0.0, (db - FLOOR_DB) / -FLOOR_DB))

    def set_level(self, rms: float) -> None:
        self.level = self.to_fraction(rms)
        self.peak = max(self.level, self.peak - 0.02)
        self.setToolTip(f"{20 * math.log10(max(rms, 1e-9)):.0f} dBFS")
        self.update()

    def reset(self) -> None:
        self.level = self.peak = 0.0
        self.update()

    def paintEvent(self, event):
        p = QPainter(self)
        try:
            r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
            pal = self.palette()
            p.setPen(pal.color(QPalette.ColorRole.Mid))
            p.setBrush(pal.color(QPalette.ColorRole.Base))
            p.drawRoundedRect(r, 3, 3)
            color = QColor("#3aa655") if self.level < 0.85 else QColor("#d9822b")
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawRoundedRect(QRectF(r.x(), r.y(), r.width() * self.level, r.height()), 3, 3)
            if self.peak > 0:
                x = r.x() + r.width() * self.peak
                p.setPen(pal.color(QPalette.ColorRole.Text))
                p.drawLine(int(x), int(r.top()) + 1, int(x), int(r.bottom()) - 1)
        finally:
            p.end()
