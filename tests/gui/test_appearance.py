"""Appearance on the real main window: View → Theme switches light/dark at once and is remembered,
and in the dark palette the stop/cancelled icons, the segments' play icons, check boxes and the
Monitor's plots stand out from the background (also after a switch while they are on screen)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QCheckBox, QStyle

from executors.transcripts.results import Segment
from ferrum_gui import theme
from ferrum_gui.shell.window_menus import THEME_KEY
from ferrum_gui.widgets.transcript_view import COL_TIME


@pytest.fixture
def themed(qapp):
    """The app's own style and theme machinery (as ``create_application`` sets it up), reset afterwards."""
    theme.apply_theme(qapp, "system")
    yield qapp
    theme.set_theme("system")


def _luminance(colour: QColor) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(colour.red()) + 0.7152 * channel(colour.green()) + 0.0722 * channel(colour.blue())


def _contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _best_contrast(image: QImage, background: QColor, rect=None) -> float:
    """The highest contrast against ``background`` of any opaque pixel (of ``rect``)."""
    rect = rect or image.rect()
    best = 1.0
    for y in range(rect.top(), rect.bottom() + 1):
        for x in range(rect.left(), rect.right() + 1):
            pixel = image.pixelColor(x, y)
            if pixel.alpha() > 200:
                best = max(best, _contrast(pixel, background))
    return best


def test_view_menu_switches_the_theme_and_remembers_it(main_window, themed):
    actions = main_window.theme_actions
    assert set(actions) == {"system", "light", "dark"} and actions["system"].isChecked()
    actions["dark"].trigger()
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
    assert main_window.palette().color(QPalette.ColorRole.Window).lightness() < 128  # on screen at once
    assert main_window.qsettings.value(THEME_KEY) == "dark" and actions["dark"].isChecked()
    actions["light"].trigger()
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightness() > 128
    assert main_window.qsettings.value(THEME_KEY) == "light"


def test_dark_icons_and_check_boxes_are_visible(main_window, themed):
    theme.set_theme("dark")
    window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    style = QApplication.style()
    for name in ("SP_MediaStop", "SP_MediaPlay"):  # the job list's cancelled/running, the player's buttons
        image = style.standardIcon(getattr(QStyle.StandardPixmap, name)).pixmap(24, 24).toImage()
        assert _best_contrast(image, window_colour) >= 4.5, name
    nav_icon = main_window.nav.item(0).icon().pixmap(24, 24).toImage()
    assert _best_contrast(nav_icon, window_colour) >= 4.5

    box = QCheckBox("Word timestamps", main_window)  # unchecked: only its frame shows where it is
    box.adjustSize()
    box.show()
    QApplication.processEvents()
    image = box.grab().toImage()
    indicator = style.subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, _option(box), box)
    assert _best_contrast(image, window_colour, indicator) >= 3.0
    box.deleteLater()


def _option(box):
    from PySide6.QtWidgets import QStyleOptionButton

    option = QStyleOptionButton()
    box.initStyleOption(option)
    return option


def _switch(window, key: str) -> QColor:
    """View → Theme → ``key``; returns the new window colour."""
    window.theme_actions[key].trigger()
    QApplication.processEvents()
    return QApplication.palette().color(QPalette.ColorRole.Base)


def test_segment_play_icons_follow_a_theme_switch(main_window, themed):
    _switch(main_window, "light")
    view = main_window.show_panel("transcribe").view
    view.set_segments([Segment(0, 0.0, 1.5, " Ten of clubs.")])
    for key in ("dark", "light"):
        base = _switch(main_window, key)
        size = view.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)  # what a table row draws
        icon = view.item(0, COL_TIME).icon().pixmap(size, size).toImage()
        assert _best_contrast(icon, base) >= 4.5, key


def test_monitor_plots_follow_a_theme_switch(main_window, themed, wait_until):
    _switch(main_window, "light")
    plots = main_window.show_panel("monitor").plots
    wait_until(lambda: plots._graphics is not None and plots._graphics.isVisible())
    for key in ("dark", "light"):
        base = _switch(main_window, key)
        image = plots._graphics.grab().toImage()
        assert image.pixelColor(2, 2) == base, key  # the background
        assert _best_contrast(image, base) >= 4.5, key  # titles and axes
