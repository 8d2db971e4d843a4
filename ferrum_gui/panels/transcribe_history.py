"""The History box of the Transcribe panel: past transcripts, kept up to date with the host's
history, opened on activation, deleted only after the user confirms (and then gone at once)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QGroupBox, QMessageBox, QVBoxLayout

from executors.core.errors import InvalidParameterError

from ..widgets.history_list import HistoryList
from ..widgets.tasks import TaskSet


class HistoryPane(QGroupBox):
    recordActivated = Signal(int)
    indexRequested = Signal(int)
    recordDeleted = Signal(int)    # after the host deleted it
    refreshed = Signal()

    def __init__(self, host, is_running: Callable[[int], bool], parent=None):
        """``is_running(record_id)``: whether a job is still writing that record (it cannot be deleted)."""
        super().__init__("History", parent)
        self.host = host
        self._is_running = is_running
        self._tasks = TaskSet(host.failure.emit)
        self.delete_dialog: QMessageBox | None = None
        self.list = HistoryList()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.list)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self.refresh)
        host.historyChanged.connect(self._timer.start)
        self.list.recordActivated.connect(self.recordActivated)
        self.list.indexRequested.connect(self.indexRequested)
        self.list.deleteRequested.connect(self.ask_delete)

    def refresh(self) -> None:
        self._tasks.spawn(self._refresh(), "reading the history")

    async def _refresh(self) -> None:
        self.list.set_entries(await self.host.list_history())
        self.refreshed.emit()

    def ask_delete(self, record_id: int) -> QMessageBox | None:
        """Ask before deleting (window-modal, non-blocking); returns the question box."""
        if self._is_running(record_id):
            self.host.failure.emit(InvalidParameterError(
                "This transcript is still being written", "cancel the transcription first, then delete it"))
            return None
        name = self.list.name_of(record_id)
        box = QMessageBox(QMessageBox.Icon.Question, "Delete transcript",
                          f"Delete the transcript of “{name}” from the history?",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self.window())
        box.setInformativeText("Its text, your edits and its search entry are removed. The audio file is kept.")
        yes = box.button(QMessageBox.StandardButton.Yes)
        yes.setText("Delete")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.buttonClicked.connect(lambda button: button == yes and self._tasks.spawn(
            self.delete(record_id), "deleting the transcript"))
        box.finished.connect(lambda _r: setattr(self, "delete_dialog", None))
        self.delete_dialog = box
        box.open()
        return box

    async def delete(self, record_id: int) -> None:
        self.list.remove_entry(record_id)  # off the screen at once; the host's refresh confirms it
        await self.host.delete_history(record_id)
        self.recordDeleted.emit(record_id)

    def shutdown(self) -> None:
        self._timer.stop()
        if self.delete_dialog is not None:
            self.delete_dialog.reject()
        self._tasks.cancel_all()

