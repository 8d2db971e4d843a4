"""``DictateAnywhere``: dictation beyond the panel — the global shortcut, the tray icon and the
caption overlay, all driven by the Dictation panel's own state and events, with the choices kept
in QSettings (group ``dictation_anywhere``).  The main window makes one; nothing else needs it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QCheckBox

from ..settings import load_group, save_group
from ..shell.preferences import register_settings_page
from .global_shortcut import DEFAULT_CHORD, GlobalShortcut
from .overlay import CaptionOverlay
from .tray import DictationTray

_GROUP = "dictation_anywhere"
register_settings_page("ferrum_gui.anywhere.settings_page:DictateAnywherePage")


@dataclass(frozen=True)
class AnywhereSettings:
    type_into_focused: bool = False    # the panel's "Type into the focused app" switch
    shortcut_enabled: bool = True
    shortcut: str = DEFAULT_CHORD      # Qt's portable text, e.g. "Ctrl+Alt+Space"
    tray: bool = True
    captions: bool = False             # the always-on-top caption overlay

    @classmethod
    def load(cls, qsettings) -> "AnywhereSettings":
        return load_group(cls, qsettings, _GROUP)

    def save(self, qsettings) -> None:
        save_group(self, qsettings, _GROUP)


class DictateAnywhere(QObject):
    def __init__(self, window, panel, qsettings=None):
        super().__init__(window)
        self.window = window
        self.panel = panel
        self.qsettings = qsettings
        self._closed = False
        self.settings = AnywhereSettings.load(qsettings) if qsettings is not None else AnywhereSettings()
        self.overlay = CaptionOverlay()
        self.tray = DictationTray(self)
        self.shortcut = GlobalShortcut(self)
        self.captions_switch = QCheckBox("Show captions")
        self.captions_switch.setToolTip("An always-on-top caption strip with the live text, for talks and calls")
        panel.add_option(self.captions_switch)

        panel.stateChanged.connect(self._on_state)
        panel.eventReceived.connect(self.overlay.on_event)
        panel.typing.enabledChanged.connect(lambda on: self._change(type_into_focused=on))
        self.captions_switch.toggled.connect(lambda on: self._change(captions=on))
        self.overlay.closed.connect(lambda: self.captions_switch.setChecked(False))
        self.tray.toggleRequested.connect(self.toggle)
        self.tray.showWindowRequested.connect(self.show_window)
        self.tray.quitRequested.connect(window.close)
        self.tray.typing_action.toggled.connect(panel.typing.set_enabled)
        self.tray.captions_action.toggled.connect(self.captions_switch.setChecked)
        self.shortcut.activated.connect(self.toggle)
        self.shortcut.statusChanged.connect(lambda _status: self.tray.set_chord(self.shortcut.chord
                                                                                if self.shortcut.active else ""))
        if qsettings is not None and qsettings.contains(f"{_GROUP}/overlay_geometry"):
            self.overlay.restoreGeometry(qsettings.value(f"{_GROUP}/overlay_geometry"))
        self.apply(self.settings)

    # ---- settings ----------------------------------------------------------------------------
    def apply(self, settings: AnywhereSettings) -> None:
        """Take ``settings`` (from the panel switches, the tray or Preferences) and keep them."""
        chord_changed = (settings.shortcut, settings.shortcut_enabled) != (self.shortcut.chord, self.shortcut.active)
        self.settings = settings
        self.panel.typing.set_enabled(settings.type_into_focused)
        self.captions_switch.setChecked(settings.captions)
        self.tray.typing_action.setChecked(settings.type_into_focused)
        self.tray.captions_action.setChecked(settings.captions)
        self.overlay.setVisible(settings.captions)
        if chord_changed:
            if settings.shortcut_enabled:
                self.shortcut.register(settings.shortcut)
            else:
                self.shortcut.unregister()
        if settings.tray:
            self.tray.show()
        else:
            self.tray.hide()
        if self.qsettings is not None:
            settings.save(self.qsettings)

    def _change(self, **changes) -> None:
        new = replace(self.settings, **changes)
        if new != self.settings:
            self.apply(new)

    # ---- actions -----------------------------------------------------------------------------
    def toggle(self) -> None:
        """Start or stop dictation (the global shortcut, the tray), whatever window is in front."""
        self.panel.toggle()

    def show_window(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    def _on_state(self, state: str) -> None:
        self.tray.set_state(state)
        self.overlay.set_state(state)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.qsettings is not None:
            self.qsettings.setValue(f"{_GROUP}/overlay_geometry", self.overlay.saveGeometry())
        self.shortcut.unregister()
        self.tray.close()
        self.overlay.close()
        self.overlay.deleteLater()
