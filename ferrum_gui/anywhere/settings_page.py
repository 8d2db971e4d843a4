"""Preferences page "Dictate anywhere": the global shortcut (on/off, the chord, whether the
desktop allows it), the tray icon, typing into the focused app and the caption overlay."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QCheckBox, QFormLayout, QKeySequenceEdit, QLabel, QWidget

from ..shell.preferences import SettingsPage
from ..widgets.form_page import lay_out_form_page
from .controller import AnywhereSettings
from .tray import DictationTray


class DictateAnywherePage(SettingsPage):
    title = "Dictate anywhere"
    icon = "dictation"

    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(host, qsettings, parent)
        window = parent.parent() if parent is not None else None
        self.controller = getattr(window, "anywhere", None)
        current = self.controller.settings if self.controller is not None else AnywhereSettings.load(qsettings)
        self.shortcut_enabled = QCheckBox("Start and stop dictation from any app with a global shortcut")
        self.shortcut_enabled.setChecked(current.shortcut_enabled)
        self.chord = QKeySequenceEdit(QKeySequence(current.shortcut))
        self.chord.setMaximumSequenceLength(1)
        self.chord.setToolTip("Press the new key combination (with Ctrl, Alt, Shift or Meta)")
        self.status = QLabel(self.controller.shortcut.status if self.controller is not None else "")
        self.status.setObjectName("PanelSubtitle")
        self.status.setWordWrap(True)
        self.tray = QCheckBox("Show a tray icon with the dictation state")
        self.tray.setChecked(current.tray)
        if not DictationTray.available():
            self.tray.setToolTip("This desktop shows no tray icons")
        self.typing = QCheckBox("Type committed text into the focused app")
        self.typing.setChecked(current.type_into_focused)
        self.captions = QCheckBox("Show the caption overlay (always on top)")
        self.captions.setChecked(current.captions)
        form = QFormLayout()
        form.setVerticalSpacing(10)
        form.addRow("", self.shortcut_enabled)
        form.addRow("Shortcut:", self.chord)
        form.addRow("Status:", self.status)
        form.addRow("", self.tray)
        form.addRow("", self.typing)
        form.addRow("", self.captions)
        lay_out_form_page(self, form, "Typing sends only committed words, which never change, to whichever app has "
                          "the keyboard (X11: xdotool; Wayland: wtype or ydotool; macOS and Windows: pynput; "
                          "elsewhere the text goes to the clipboard). The shortcut works while Ferrum is "
                          "minimised; Wayland desktops do not allow one, bind “ferrum-gui --toggle-dictation” "
                          "in the desktop's keyboard settings instead.")

    def values(self) -> AnywhereSettings:
        chord = self.chord.keySequence().toString(QKeySequence.SequenceFormat.PortableText)
        return AnywhereSettings(type_into_focused=self.typing.isChecked(),
                                shortcut_enabled=self.shortcut_enabled.isChecked(),
                                shortcut=chord or AnywhereSettings().shortcut, tray=self.tray.isChecked(),
                                captions=self.captions.isChecked())

    def apply(self) -> None:
        settings = self.values()
        if self.controller is None:
            settings.save(self.qsettings)
            return
        self.controller.apply(settings)
        self.status.setText(self.controller.shortcut.status)
