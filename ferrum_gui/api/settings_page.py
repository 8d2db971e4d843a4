"""Preferences page "API server": on/off, port, token (with a copy button), upload limit, status."""

from __future__ import annotations

import asyncio

import shiboken6
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from ..shell.preferences import SettingsPage
from ..widgets.form_page import lay_out_form_page
from .server import ApiSettings, api_controller


class ApiServerPage(SettingsPage):
    title = "API server"
    icon = "SP_DriveNetIcon"

    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(host, qsettings, parent)
        self.controller = api_controller(host)
        current = ApiSettings.load(qsettings)
        self.enabled = QCheckBox("Serve the OpenAI-compatible API on this computer (127.0.0.1)")
        self.enabled.setChecked(current.enabled)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(current.port)
        self.auth = QCheckBox("Require the bearer token")
        self.auth.setChecked(current.auth)
        self.max_upload = QSpinBox()
        self.max_upload.setRange(1, 4096)
        self.max_upload.setSuffix(" MB")
        self.max_upload.setValue(current.max_upload_mb)
        self.save_history = QCheckBox("Keep API transcriptions in the transcript history")
        self.save_history.setChecked(current.save_history)
        self.token = QLineEdit()
        self.token.setReadOnly(True)
        self.token.setEchoMode(QLineEdit.EchoMode.PasswordEchoOnEdit)
        self.copy = QPushButton("Copy")
        self.copy.setToolTip("Copy the token to the clipboard")
        self.copy.clicked.connect(self.copy_token)
        self.status = QLabel()
        self.status.setObjectName("PanelSubtitle")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(self.status.textInteractionFlags() | _selectable())

        token_row = QWidget()
        row = QHBoxLayout(token_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.token, 1)
        row.addWidget(self.copy)
        form = QFormLayout()
        form.setVerticalSpacing(10)
        form.addRow("", self.enabled)
        form.addRow("Port:", self.port)
        form.addRow("", self.auth)
        form.addRow("Token:", token_row)
        form.addRow("Largest upload:", self.max_upload)
        form.addRow("", self.save_history)
        form.addRow("Status:", self.status)
        lay_out_form_page(self, form, "Clients use it like OpenAI's API: base URL http://127.0.0.1:<port>/v1 and the token as the "
                      "API key. Requests share the app's models and queue behind its own jobs.")
        self.controller.stateChanged.connect(self._show_state)
        self._show_state(self.controller.state, self.controller.message)
        try:
            self.token.setText(self.controller.token or "")
        except Exception as exc:  # noqa: BLE001 - an unwritable data folder: say so, keep the page usable
            self.token.setPlaceholderText(str(exc))

    def values(self) -> ApiSettings:
        return ApiSettings(enabled=self.enabled.isChecked(), port=self.port.value(), auth=self.auth.isChecked(),
                           max_upload_mb=self.max_upload.value(), save_history=self.save_history.isChecked())

    def copy_token(self) -> None:
        QApplication.clipboard().setText(self.token.text())

    def _show_state(self, state: str, message: str) -> None:
        if not shiboken6.isValid(self.status):
            return
        text = {"running": f"Running at {message}", "error": f"Could not start: {message}"}.get(state, message)
        self.status.setText(text)

    def apply(self):
        settings = self.values()
        settings.save(self.qsettings)
        return asyncio.ensure_future(self.controller.apply(settings))


def _selectable():
    from PySide6.QtCore import Qt

    return Qt.TextInteractionFlag.TextSelectableByMouse
