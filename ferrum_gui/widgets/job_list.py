"""The job queue: one row per job with file name, progress bar, elapsed time, real-time factor,
state and a cancel button. Esc cancels the selected job."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QProgressBar,
    QStyle,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
)

from .. import theme
from .highlight import format_clock
from .placeholder import PlaceholderMixin


class JobState(str, enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


@dataclass
class _Job:
    item: QTreeWidgetItem
    bar: QProgressBar
    cancel: QToolButton
    state: JobState = JobState.QUEUED
    started: float | None = None
    ended: float | None = None
    audio_done: float = 0.0

    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        return (self.ended or time.monotonic()) - self.started

    def rtf(self) -> float | None:
        """Processing time per second of audio (below 1 = faster than real time)."""
        elapsed = self.elapsed()
        return elapsed / self.audio_done if elapsed and self.audio_done > 0 else None


COL_FILE, COL_PROGRESS, COL_ELAPSED, COL_RTF, COL_STATE, COL_CANCEL = range(6)


class JobList(PlaceholderMixin, QTreeWidget):
    cancelRequested = Signal(str)
    jobActivated = Signal(str)

    placeholder_text = "Drop audio or video files here, or press Open… to add them to the queue"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._jobs: dict[str, _Job] = {}
        self.setColumnCount(6)
        self.setHeaderLabels(["File", "Progress", "Elapsed", "RTF", "State", ""])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_FILE, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(28)
        for col, width in ((COL_PROGRESS, 90), (COL_ELAPSED, 52), (COL_RTF, 52), (COL_STATE, 92),
                           (COL_CANCEL, 30)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            label = self.headerItem().text(col)  # never "Elapse": room for the caption in any font
            header.resizeSection(col, max(width, header.fontMetrics().horizontalAdvance(label) + 20))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.itemActivated.connect(self._on_activated)
        self.itemClicked.connect(self._on_activated)
        self._tick = QTimer(self)
        self._tick.setInterval(500)
        self._tick.timeout.connect(self._refresh_times)

    # --- queries -------------------------------------------------------------------------

    def job_ids(self) -> list[str]:
        return list(self._jobs)

    def state(self, job_id: str) -> JobState:
        return self._jobs[job_id].state

    def progress(self, job_id: str) -> int:
        return self._jobs[job_id].bar.value()

    def row_text(self, job_id: str) -> list[str]:
        item = self._jobs[job_id].item
        return [item.text(c) for c in range(self.columnCount())]

    def selected_job(self) -> str | None:
        items = self.selectedItems()
        return items[0].data(COL_FILE, Qt.ItemDataRole.UserRole) if items else None

    # --- updates -------------------------------------------------------------------------

    def add_job(self, job_id: str, title: str, tooltip: str = "") -> None:
        item = QTreeWidgetItem([title, "", "", "", JobState.QUEUED.value, ""])
        item.setData(COL_FILE, Qt.ItemDataRole.UserRole, job_id)
        item.setToolTip(COL_FILE, tooltip or title)
        item.setIcon(COL_FILE, theme.icon("transcribe", 16))
        self.addTopLevelItem(item)
        bar = QProgressBar()
        bar.setRange(0, 100)
        bar.setTextVisible(True)
        bar.setMaximumHeight(16)
        cancel = QToolButton()
        cancel.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogCancelButton))
        cancel.setToolTip("Cancel this job (Esc)")
        cancel.setAutoRaise(True)
        cancel.clicked.connect(lambda: self.cancelRequested.emit(job_id))
        self.setItemWidget(item, COL_PROGRESS, bar)
        self.setItemWidget(item, COL_CANCEL, cancel)
        self._jobs[job_id] = _Job(item, bar, cancel)
        self.viewport().update()

    def set_running(self, job_id: str) -> None:
        job = self._jobs[job_id]
        job.state, job.started = JobState.RUNNING, time.monotonic()
        job.item.setText(COL_STATE, JobState.RUNNING.value)
        job.item.setIcon(COL_STATE, self.style().standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self._tick.start()
        self._refresh_row(job)
        self.scrollToItem(job.item)  # a long queue shows the job it is working on

    def set_progress(self, job_id: str, done: float, total: float) -> None:
        job = self._jobs.get(job_id)
        if job is None or job.state.finished:
            return
        job.audio_done = done
        if total > 0:
            job.bar.setValue(round(100 * min(1.0, done / total)))
        self._refresh_row(job)

    def set_state(self, job_id: str, state: JobState, message: str = "") -> None:
        job = self._jobs[job_id]
        job.state = state
        if state.finished:
            job.ended = time.monotonic() if job.started is not None else None
            job.cancel.setEnabled(False)
            job.cancel.setVisible(False)
            if state is JobState.DONE:
                job.bar.setValue(100)
        icons = {JobState.DONE: QStyle.StandardPixmap.SP_DialogApplyButton,
                 JobState.FAILED: QStyle.StandardPixmap.SP_MessageBoxWarning,
                 JobState.CANCELLED: QStyle.StandardPixmap.SP_MediaStop}
        if state in icons:
            job.item.setIcon(COL_STATE, self.style().standardIcon(icons[state]))
        job.item.setText(COL_STATE, state.value)
        job.item.setToolTip(COL_STATE, message or state.value)
        self._refresh_row(job)
        if not any(j.state is JobState.RUNNING for j in self._jobs.values()):
            self._tick.stop()

    def clear_finished(self) -> None:
        for job_id in [j for j, job in self._jobs.items() if job.state.finished]:
            job = self._jobs.pop(job_id)
            self.takeTopLevelItem(self.indexOfTopLevelItem(job.item))
        self.viewport().update()

    # --- internals -----------------------------------------------------------------------

    def _refresh_row(self, job: _Job) -> None:
        job.item.setText(COL_ELAPSED, format_clock(job.elapsed()) if job.started is not None else "")
        rtf = job.rtf()
        job.item.setText(COL_RTF, f"{rtf:.2f}×" if rtf is not None else "")
        job.item.setToolTip(COL_RTF, "Real-time factor: processing time ÷ audio time (lower is faster)")

    def _refresh_times(self) -> None:
        for job in self._jobs.values():
            if job.state is JobState.RUNNING:
                self._refresh_row(job)

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        self.jobActivated.emit(item.data(COL_FILE, Qt.ItemDataRole.UserRole))

    def keyPressEvent(self, event):
        if event.key() == Qt.Key.Key_Escape:
            job_id = self.selected_job() or next(
                (j for j, job in self._jobs.items() if job.state is JobState.RUNNING), None)
            if job_id is not None and not self._jobs[job_id].state.finished:
                self.cancelRequested.emit(job_id)
                return
        super().keyPressEvent(event)
