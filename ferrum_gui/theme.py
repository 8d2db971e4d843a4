"""Look and feel: Fusion style, the system's (or the chosen) light/dark palette, the stylesheet and icons."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QStyle

from .icons import FerrumStyle, is_dark, palette_icon, svg_drawer

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


THEMES = {"system": "Follow the system", "light": "Light", "dark": "Dark"}
_choice = "system"
_system_palette: QPalette | None = None


def _wants_dark(app: QApplication) -> bool:
    forced = os.environ.get("FERRUM_THEME", "").lower()
    if forced in ("dark", "light"):
        return forced == "dark"
    if _choice in ("dark", "light"):
        return _choice == "dark"
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


def apply_theme(app: QApplication, choice: str = "system") -> None:
    """Fusion (with ``icons.FerrumStyle``'s readable icons) + the system palette, or the light or dark
    one the user chose (``THEMES``) + our stylesheet; "system" follows the system's light/dark switch.
    ``FERRUM_THEME=light|dark`` in the environment overrides the choice (screenshots)."""
    global _system_palette
    if _system_palette is None:
        _system_palette = QPalette(app.palette())
        app.setStyle(FerrumStyle("Fusion"))
        app.styleHints().colorSchemeChanged.connect(lambda _scheme: _apply_palette(app))
    set_theme(choice, app)


def set_theme(choice: str, app: QApplication | None = None) -> None:
    """Switch between "system", "light" and "dark" now; widgets on screen follow."""
    global _choice
    _choice = choice if choice in THEMES else "system"
    _apply_palette(app or QApplication.instance())


def current_theme() -> str:
    return _choice


def _apply_palette(app: QApplication) -> None:
    """Keep the platform's palette when it matches the scheme; otherwise substitute ours."""
    dark = _wants_dark(app)
    if _system_palette is not None and dark == is_dark(_system_palette):
        palette = _system_palette
    else:
        palette = dark_palette() if dark else app.style().standardPalette()
    app.setPalette(palette)
    qss = resources_dir() / "style.qss"
    app.setStyleSheet(qss.read_text(encoding="utf-8") if qss.is_file() else "")


@functools.lru_cache(maxsize=64)
def icon(name: str, size: int = 24) -> QIcon:
    """A monochrome icon from ``resources/icons/<name>.svg`` painted in the palette's text colour when
    shown (so it reads on light and dark, and follows a theme switch), or a QStyle standard icon when
    ``name`` starts with ``SP_``. ``size`` is kept for callers; the icon scales to any size."""
    app = QApplication.instance()
    if name.startswith("SP_"):
        return app.style().standardIcon(getattr(QStyle.StandardPixmap, name))
    path = resources_dir() / "icons" / f"{name}.svg"
    if not path.is_file():
        return QIcon()
    return palette_icon(svg_drawer(path.read_text(encoding="utf-8")))
