"""Preferences page "Watch folder": on/off, the folder, the transcript written beside each file, status."""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from executors.transcripts.exporters import FORMATS

from .. import theme
from ..shell.preferences import SettingsPage
from ..widgets.form_page import lay_out_form_page
from .controller import WatchSettings, watch_controller


class WatchFolderPage(SettingsPage):
    title = "Watch folder"
    icon = "SP_DirOpenIcon"

    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(host, qsettings, parent)
        self.controller = watch_controller(host)
        current = WatchSettings.load(qsettings)
        self.enabled = QCheckBox("Transcribe recordings that appear or change in a folder")
        self.enabled.setChecked(current.enabled)
        self.folder = QLineEdit(current.folder)
        self.folder.setPlaceholderText("Choose a folder…")
        browse = QPushButton(theme.icon("SP_DirOpenIcon"), "Browse…")
        browse.clicked.connect(self._browse)
        self.output = QComboBox()
        self.output.addItem("Only the transcript history", "")
        for name, fmt in FORMATS.items():
            self.output.addItem(f"Also {fmt.title} beside each recording (.{name})", name)
        self.output.setCurrentIndex(max(0, self.output.findData(current.output_format)))
        self.status = QLabel()
        self.status.setObjectName("PanelSubtitle")
        self.status.setWordWrap(True)

        folder_row = QWidget()
        row = QHBoxLayout(folder_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.setVerticalSpacing(10)
        form.addRow("", self.enabled)
        form.addRow("Folder:", folder_row)
        form.addRow("Transcripts:", self.output)
        form.addRow("Status:", self.status)
        lay_out_form_page(self, form, "Audio and video files in the folder and its subfolders go to the Transcribe "
                          "queue with its current options, each once: files already there first, then every new "
                          "or changed one as soon as it has finished copying. Transcripts land in the history and "
                          "the search index. Removing the folder stops the watching.")
        self.controller.stateChanged.connect(self._show_state)
        self._show_state(self.controller.state, self.controller.message)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose the folder to watch", self.folder.text())
        if folder:
            self.folder.setText(folder)
            self.enabled.setChecked(True)

    def _show_state(self, state: str, message: str) -> None:
        if not shiboken6.isValid(self.status):  # the dialog closed; the controller lives on
            return
        self.status.setText({"watching": f"Watching {message}"}.get(state, message))

    def values(self) -> WatchSettings:
        return WatchSettings(enabled=self.enabled.isChecked(), folder=self.folder.text().strip(),
                             output_format=self.output.currentData())

    def apply(self):
        import asyncio

        settings = self.values()
        settings.save(self.qsettings)
        return asyncio.ensure_future(self.controller.apply(settings))
