"""Preferences dialog: a list of settings pages; each page saves to QSettings and applies itself.

Pages come from ``SETTINGS_PAGES`` ("module:Class" strings, imported when the dialog opens).
A page is a ``SettingsPage``: ``SettingsPage(host, qsettings, parent)`` with ``title``, ``icon``
and ``apply()``. Another part of the app adds its page with ``register_settings_page("pkg.mod:Page")``.
"""

from __future__ import annotations

import asyncio
import importlib
import os

import shiboken6
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from executors.service.workers import IO

from .. import theme
from ..settings import DEFAULT_EMBEDDING, HostSettings
from ..widgets.form_page import lay_out_form_page

SETTINGS_PAGES: list[str] = ["ferrum_gui.shell.preferences:ModelsPage", "ferrum_gui.api.settings_page:ApiServerPage",
                             "ferrum_gui.watch.settings_page:WatchFolderPage"]

DTYPES = [("auto", "Automatic"), ("float32", "float32"),  # the engine then says what Automatic runs
          ("float16", "float16 (GPU only)"), ("bfloat16", "bfloat16")]


def register_settings_page(ref: str) -> None:
    if ref not in SETTINGS_PAGES:
        SETTINGS_PAGES.append(ref)


def _load_page(ref: str):
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


class SettingsPage(QWidget):
    title = "Settings"
    icon = "settings"

    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.host, self.qsettings = host, qsettings

    def apply(self) -> None:
        """Persist and apply this page's values."""
        raise NotImplementedError


class ModelsPage(SettingsPage):
    """Device, dtype, threads and the two models; applying reloads only what changed."""

    title = "Models and device"
    icon = "models"

    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(host, qsettings, parent)
        current = host.settings
        self.device = QComboBox()
        self.device.addItem("Automatic (best available)", "auto")
        self._set_devices(["cpu"], current.device)
        self._devices_task = asyncio.ensure_future(self._fill_devices(current.device))
        self.dtype = QComboBox()
        for value, label in DTYPES:
            self.dtype.addItem(label, value)
        self.dtype.setCurrentIndex(max(0, self.dtype.findData(current.dtype)))
        self._automatic_task = asyncio.ensure_future(self._describe_automatic())
        self.threads = QSpinBox()
        self.threads.setRange(0, max(1, os.cpu_count() or 1))
        self.threads.setSpecialValueText("Automatic")
        self.threads.setValue(current.threads)
        self.whisper = self._model_combo(host.whisper_models(), current.whisper_model)
        self.embedding = self._model_combo([current.embedding_model, DEFAULT_EMBEDDING], current.embedding_model)
        self.batch_size = QSpinBox()
        self.batch_size.setRange(1, 32)
        self.batch_size.setValue(max(1, current.batch_size))
        self.batch_size.setToolTip("How many 30-second windows of a file are decoded together. 1 (one at a "
                                   "time) is the fastest on a CPU; a GPU may gain from more. Files under 30 s "
                                   "get the same text either way.")
        self.fast_long_files = QCheckBox("Fast long files")
        self.fast_long_files.setChecked(current.fast_long_files)
        self.fast_long_files.setToolTip("Decode the speech Silero VAD finds in independent pieces of up to 30 "
                                        "seconds, several at a time: faster on long recordings, "
                                        "with one subtitle line per piece (word times when asked for).")
        self.auto_index = QCheckBox("Make finished transcripts searchable")
        self.auto_index.setChecked(current.auto_index_transcripts)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.setVerticalSpacing(10)
        form.addRow("Device:", self.device)
        form.addRow("Precision:", self.dtype)
        form.addRow("CPU threads:", self.threads)
        form.addRow("Transcription batch:", self.batch_size)
        form.addRow("", self.fast_long_files)
        form.addRow("Speech model:", self._with_browse(self.whisper, "Choose a Whisper model folder "
                                                                     "(CTranslate2 or Hugging Face format)"))
        form.addRow("Embedding model:", self._with_browse(self.embedding, "Choose an embedding model folder "
                                                                          "(Hugging Face format)"))
        form.addRow("", self.auto_index)
        lay_out_form_page(self, form, "Applying reloads the affected models in the background; the Monitor shows the "
                      "reload. A model can be a bundled name, a CTranslate2 folder or a Hugging Face folder.")

    @staticmethod
    def _model_combo(choices: list[str], current: str) -> QComboBox:
        combo = QComboBox()
        combo.setEditable(True)
        combo.addItems(list(dict.fromkeys(choices)))
        combo.setCurrentText(current)
        return combo

    def _with_browse(self, combo: QComboBox, caption: str) -> QWidget:
        button = QPushButton(theme.icon("SP_DirOpenIcon"), "Browse…")
        button.clicked.connect(lambda: self._browse(combo, caption))
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(combo, 1)
        layout.addWidget(button)
        return row

    def _browse(self, combo: QComboBox, caption: str) -> None:
        folder = QFileDialog.getExistingDirectory(self, caption)
        if folder:
            combo.setCurrentText(folder)

    async def _fill_devices(self, current: str) -> None:
        try:
            devices = await self.host.available_devices()
        except Exception:  # noqa: BLE001 - already reported by the host; keep the CPU-only list
            return
        if shiboken6.isValid(self.device):  # the dialog may have closed meanwhile
            self._set_devices(devices, self.device.currentData() or current)

    async def _describe_automatic(self) -> None:
        """"Automatic (int8 speech model, float32 embeddings on CPU; …)", as the engine decides it."""
        from executors.service.precision import describe_automatic

        try:
            text = await self.host.run_on(IO, describe_automatic, self.host.service.settings)
        except Exception:  # noqa: BLE001 - the app is closing; the plain "Automatic" stays
            return
        if shiboken6.isValid(self.dtype):
            self.dtype.setItemText(self.dtype.findData("auto"), f"Automatic ({text})")

    def _set_devices(self, devices: list[str], current: str) -> None:
        """List exactly what ``available_devices()`` reports (plus a saved one that has gone away)."""
        while self.device.count() > 1:
            self.device.removeItem(1)
        for dev in devices:
            self.device.addItem(dev.upper() if dev in ("cpu", "mps") else dev, dev)
        if current != "auto" and self.device.findData(current) < 0:
            self.device.addItem(f"{current} (not available)", current)
        self.device.setCurrentIndex(max(0, self.device.findData(current)))

    def values(self) -> HostSettings:
        return self.host.settings.with_changes(
            device=self.device.currentData(), dtype=self.dtype.currentData(), threads=self.threads.value(),
            whisper_model=self.whisper.currentText().strip() or self.host.settings.whisper_model,
            embedding_model=self.embedding.currentText().strip() or self.host.settings.embedding_model,
            auto_index_transcripts=self.auto_index.isChecked(), batch_size=self.batch_size.value(),
            fast_long_files=self.fast_long_files.isChecked())

    def apply(self):
        """Reload what changed in the background; then save what is in effect (a model that could not
        be loaded is refused and the working one kept, so it is not saved either)."""
        return asyncio.ensure_future(self._apply(self.values()))

    async def _apply(self, settings: HostSettings):
        names = await self.host.apply_settings(settings)
        self.host.settings.save(self.qsettings)
        return names


class PreferencesDialog(QDialog):
    def __init__(self, host, qsettings: QSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        self.setMinimumSize(780, 460)
        self.pages: list[SettingsPage] = [_load_page(ref)(host, qsettings, self) for ref in SETTINGS_PAGES]
        self.nav = QListWidget()
        self.nav.setObjectName("NavList")
        self.nav.setFixedWidth(190)
        self.stack = QStackedWidget()
        for page in self.pages:
            self.nav.addItem(QListWidgetItem(theme.icon(page.icon), page.title))
            self.stack.addWidget(page)
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.setCurrentRow(0)
        self.nav.setVisible(len(self.pages) > 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                   | QDialogButtonBox.StandardButton.Apply)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        self.buttons = buttons
        body = QHBoxLayout()
        body.setSpacing(16)
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(16, 16, 16, 12)
        column.addLayout(body, 1)
        column.addWidget(buttons, 0, Qt.AlignmentFlag.AlignRight)

    def page(self, page_type: type) -> SettingsPage | None:
        return next((p for p in self.pages if isinstance(p, page_type)), None)

    def apply(self) -> list:
        """Apply every page; returns what the pages returned (futures of background reloads)."""
        return [page.apply() for page in self.pages]

    def accept(self) -> None:
        self.apply()
        super().accept()
