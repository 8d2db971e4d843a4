"""Look and feel: Fusion style, the system's light/dark palette, the stylesheet and icons."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyle

APP_ID = "ferrum-desktop"


def resources_dir() -> Path:
    """Packaged resources (``ferrum_gui/resources``) if present, else the checkout's ``resources/``."""
    packaged = Path(__file__).resolve().parent / "resources"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[1] / "resources"


def app_icon() -> QIcon:
    icon = QIcon()
    base = resources_dir()
    for size in (16, 32, 48, 64, 128, 256):
        png = base / "icons" / f"ferrum-desktop-{size}.png"
        if png.is_file():
            icon.addFile(str(png), QSize(size, size))
    svg = base / "ferrum-desktop.svg"
    if svg.is_file():
        icon.addFile(str(svg))
    return icon


def _is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def _wants_dark(app: QApplication) -> bool:
    forced = os.environ.get("FERRUM_THEME", "").lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def dark_palette() -> QPalette:
    """Used only when the system asks for dark but the platform theme supplies no dark palette."""
    p = QPalette()
    roles = QPalette.ColorRole
    for role, color in {
        roles.Window: "#202124", roles.WindowText: "#e8eaed", roles.Base: "#17181a",
        roles.AlternateBase: "#26282b", roles.ToolTipBase: "#2d2f33", roles.ToolTipText: "#e8eaed",
        roles.Text: "#e8eaed", roles.Button: "#2b2d31", roles.ButtonText: "#e8eaed",
        roles.BrightText: "#ff6b5b", roles.Highlight: "#d35400", roles.HighlightedText: "#ffffff",
        roles.Link: "#f39c5a", roles.PlaceholderText: "#9aa0a6", roles.Mid: "#3c4043",
        roles.Midlight: "#34373b", roles.Dark: "#111213", roles.Light: "#4a4d52", roles.Shadow: "#000000",
    }.items():
        p.setColor(role, QColor(color))
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7378"))
    return p


def apply_theme(app: QApplication) -> None:
    """Fusion + the system palette (dark when the system is dark) + our stylesheet; re-applied when
    the system switches between light and dark."""
    app.setStyle("Fusion")
    _apply_palette(app)
    app.styleHints().colorSchemeChanged.connect(lambda _scheme: _apply_palette(app))


def _apply_palette(app: QApplication) -> None:
    """Keep the platform's palette when it matches the scheme; otherwise substitute ours."""
    dark = _wants_dark(app)
    if dark != _is_dark(app.palette()):
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
    qss = resources_dir() / "style.qss"
    app.setStyleSheet(qss.read_text(encoding="utf-8") if qss.is_file() else "")
    icon.cache_clear()


@functools.lru_cache(maxsize=64)
def icon(name: str, size: int = 24) -> QIcon:
    """A monochrome icon from ``resources/icons/<name>.svg`` drawn in the palette's text colour
    (so it reads on light and dark), or a QStyle standard icon when ``name`` starts with ``SP_``."""
    app = QApplication.instance()
    if name.startswith("SP_"):
        return app.style().standardIcon(getattr(QStyle.StandardPixmap, name))
    path = resources_dir() / "icons" / f"{name}.svg"
    if not path.is_file():
        return QIcon()
    result = QIcon()
    svg = path.read_text(encoding="utf-8")
    palette = QGuiApplication.palette()
    for mode, role in ((QIcon.Mode.Normal, QPalette.ColorRole.WindowText),
                       (QIcon.Mode.Selected, QPalette.ColorRole.HighlightedText)):
        result.addPixmap(_render(svg.replace("#000000", palette.color(role).name()), size), mode)
    disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
    result.addPixmap(_render(svg.replace("#000000", disabled.name()), size), QIcon.Mode.Disabled)
    return result


def _render(svg: str, size: int) -> QPixmap:
    ratio = QGuiApplication.primaryScreen().devicePixelRatio() if QGuiApplication.primaryScreen() else 1.0
    pixmap = QPixmap(int(size * ratio), int(size * ratio))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    QSvgRenderer(QByteArray(svg.encode())).render(painter, QRectF(0, 0, pixmap.width(), pixmap.height()))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap
