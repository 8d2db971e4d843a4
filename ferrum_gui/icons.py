"""Icons and indicators that stay readable in light and dark palettes.

Monochrome icons are painted when shown, in the palette's text colour of that moment, so switching
the theme recolours every icon already on screen. ``FerrumStyle`` (Fusion underneath) hands out such
icons for the media buttons, whose stock pixmaps are black, and gives check boxes and radio buttons
a visible edge on a dark window, where Fusion draws them dark on dark.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QByteArray, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QIcon,
    QIconEngine,
    QPainter,
    QPalette,
    QPixmap,
    QPolygonF,
)
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QProxyStyle, QStyle

Draw = Callable[[QPainter, QRectF, QColor], None]


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def _colour(mode: QIcon.Mode) -> QColor:
    palette = QGuiApplication.palette()
    if mode == QIcon.Mode.Disabled:
        return palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    if mode == QIcon.Mode.Selected:
        return palette.color(QPalette.ColorRole.HighlightedText)
    return palette.color(QPalette.ColorRole.WindowText)


class PaletteIconEngine(QIconEngine):
    """Paints ``draw(painter, rect, colour)`` with the current palette's colour for the icon mode."""

    def __init__(self, draw: Draw):
        super().__init__()
        self._draw = draw
        self._cache: dict[tuple, QPixmap] = {}

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        self._draw(painter, QRectF(rect), _colour(mode))
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        key = (size.width(), size.height(), int(mode.value), _colour(mode).rgba())
        pixmap = self._cache.get(key)
        if pixmap is None:
            pixmap = QPixmap(size)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
            painter.end()
            if len(self._cache) > 32:
                self._cache.clear()
            self._cache[key] = pixmap
        return pixmap

    def clone(self) -> QIconEngine:
        return PaletteIconEngine(self._draw)


def palette_icon(draw: Draw) -> QIcon:
    return QIcon(PaletteIconEngine(draw))


def svg_drawer(svg: str) -> Draw:
    """Draws a monochrome SVG (drawn in #000000) in the given colour."""
    def draw(painter: QPainter, rect: QRectF, colour: QColor) -> None:
        QSvgRenderer(QByteArray(svg.replace("#000000", colour.name()).encode())).render(painter, rect)
    return draw


def _play(painter: QPainter, rect: QRectF, colour: QColor) -> None:
    r = rect.adjusted(rect.width() * 0.22, rect.height() * 0.18, -rect.width() * 0.16, -rect.height() * 0.18)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawPolygon(QPolygonF([r.topLeft(), QPointF(r.right(), r.center().y()), r.bottomLeft()]))


def _stop(painter: QPainter, rect: QRectF, colour: QColor) -> None:
    side = min(rect.width(), rect.height()) * 0.56
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    painter.drawRoundedRect(QRectF(rect.center().x() - side / 2, rect.center().y() - side / 2, side, side),
                            side * 0.12, side * 0.12)


def _pause(painter: QPainter, rect: QRectF, colour: QColor) -> None:
    w, h = rect.width(), rect.height()
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(colour)
    for x in (0.26, 0.58):
        painter.drawRect(QRectF(rect.left() + w * x, rect.top() + h * 0.2, w * 0.16, h * 0.6))


_MEDIA = {QStyle.StandardPixmap.SP_MediaPlay: _play, QStyle.StandardPixmap.SP_MediaStop: _stop,
          QStyle.StandardPixmap.SP_MediaPause: _pause}


def media_icon(standard: QStyle.StandardPixmap) -> QIcon:
    """The play, stop or pause icon in the palette's colours, whatever the application's style."""
    return palette_icon(_MEDIA[standard])


class FerrumStyle(QProxyStyle):
    """Fusion, with palette-coloured media icons and indicators that show on dark windows."""

    def __init__(self, base: str = "Fusion"):
        super().__init__(base)
        self._icons = {sp: media_icon(sp) for sp in _MEDIA}

    def standardIcon(self, standard_icon, option=None, widget=None):
        icon = self._icons.get(standard_icon)
        return QIcon(icon) if icon is not None else super().standardIcon(standard_icon, option, widget)

    def drawPrimitive(self, element, option, painter, widget=None):
        super().drawPrimitive(element, option, painter, widget)
        if element in (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton) \
                and is_dark(option.palette):
            # Fusion's edge is the window colour darkened: invisible on a dark window. Draw a light one.
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            edge = option.palette.color(QPalette.ColorRole.PlaceholderText)
            if option.state & QStyle.StateFlag.State_HasFocus or option.state & QStyle.StateFlag.State_MouseOver:
                edge = option.palette.color(QPalette.ColorRole.Highlight)
            painter.setPen(edge)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
            if element == QStyle.PrimitiveElement.PE_IndicatorRadioButton:
                painter.drawEllipse(rect)
            else:
                painter.drawRoundedRect(rect, 2, 2)
            painter.restore()
