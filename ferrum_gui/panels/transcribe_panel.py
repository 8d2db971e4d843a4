"""Transcribe panel: a queue of files run one at a time through the host, the live transcript
(editable, click to play), export, and the history of past transcripts."""

from __future__ import annotations

import itertools
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QGroupBox, QHBoxLayout, QLabel, QSplitter, QStyle,
                               QToolButton, QVBoxLayout, QWidget)

from executors.errors import Cancelled, FerrumError, InvalidParameterError
from executors.whisper.options import TranscribeOptions
from executors.whisper.results import Segment, Transcript

from ..widgets.history_list import HistoryList
from ..widgets.job_list import JobList, JobState
from ..widgets.tasks import TaskSet
from ..widgets.transcript_view import TranscriptView
from ..widgets.transcribe_options import TranscribeOptionsBar

MEDIA_FILTER = ("Audio and video (*.wav *.flac *.mp3 *.m4a *.ogg *.opus *.aac *.wma *.mp4 *.mkv *.mov "
                "*.webm *.avi);;All files (*)")
EXPORT_FORMATS = {"txt": "Plain text (*.txt)", "srt": "SubRip subtitles (*.srt)",
                  "vtt": "WebVTT subtitles (*.vtt)", "json": "JSON with segments (*.json)"}
_panel_jobs = itertools.count(1)


class TranscribePanel(QWidget):
    """Panel API: ``enqueue(paths)``, ``open_files()``, ``await export(path)``,
    ``await open_record(record_id, segment_id)``, ``await send_to_index()``, ``cancel_job(job_id)``."""

    jobStateChanged = Signal(str, str)   # job_id, JobState value
    recordShown = Signal(int)            # record id now in the transcript view
    historyRefreshed = Signal()

    def __init__(self, host, parent=None):
        super().__init__(parent)
        self.host = host
        self.setAcceptDrops(True)
        self._tasks = TaskSet(host.failure.emit)
        self._queue: list[tuple[str, Path, TranscribeOptions]] = []
        self._running: str | None = None
        self._job_records: dict[str, int] = {}
        self._job_segments: dict[str, list[Segment]] = {}
        self._job_paths: dict[str, Path] = {}
        self._shown_job: str | None = None      # job whose live segments the view follows
        self._record_id: int | None = None      # history record shown in the view
        self._audio_path: str | None = None
        self._transcript: Transcript | None = None
        self._build()
        self._connect()
        self.refresh_history()

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        self.options_bar = TranscribeOptionsBar(self.host.whisper_models(), self.host.settings.whisper_model)
        self.open_button = self._tool_button("Open…", QStyle.StandardPixmap.SP_DialogOpenButton,
                                             "Add audio or video files to the queue", self.open_files)
        self.clear_button = self._tool_button("Clear finished", QStyle.StandardPixmap.SP_DialogResetButton,
                                              "Remove finished jobs from the queue", self._clear_finished)
        top = QHBoxLayout()
        top.setSpacing(8)
        top.addWidget(self.open_button)
        top.addWidget(self.options_bar, 1)
        top.addWidget(self.clear_button)

        self.jobs = JobList()
        self.history = HistoryList()
        queue_box = _group("Queue", self.jobs)
        history_box = _group("History", self.history)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(queue_box)
        left.addWidget(history_box)

        self.title = QLabel("No transcript open")
        self.title.setStyleSheet("font-weight:600;")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.view = TranscriptView()
        self.export_action = self._action("Export…", "Ctrl+E", QStyle.StandardPixmap.SP_DialogSaveButton,
                                          self.export_dialog)
        self.index_action = self._action("Add to search", "Ctrl+Shift+I", QStyle.StandardPixmap.SP_FileDialogContentsView,
                                         lambda: self._tasks.spawn(self.send_to_index(), "indexing the transcript"))
        self.play_action = self._action("Play segment", "Ctrl+P", QStyle.StandardPixmap.SP_MediaPlay,
                                        self.view.play_selected)
        self.stop_action = self._action("Stop", "Ctrl+.", QStyle.StandardPixmap.SP_MediaStop,
                                        self.host.stop_playback)
        view_bar = QHBoxLayout()
        view_bar.setSpacing(6)
        view_bar.addWidget(self.title, 1)
        for action in (self.play_action, self.stop_action, self.index_action, self.export_action):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            view_bar.addWidget(button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(view_bar)
        right_layout.addWidget(self.view, 1)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([520, 680])
        self.status = QLabel()
        self.status.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        self._update_model_state(*self.host.model_state("whisper"))
        self._update_actions()

    def _tool_button(self, text, icon, tip, slot) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.clicked.connect(slot)
        return button

    def _action(self, text, shortcut, icon, slot) -> QAction:
        action = QAction(self.style().standardIcon(icon), text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setToolTip(f"{text} ({QKeySequence(shortcut).toString(QKeySequence.SequenceFormat.NativeText)})")
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)
        return action

    def _connect(self) -> None:
        h = self.host
        h.jobStarted.connect(self._on_job_started)
        h.jobProgress.connect(self._on_job_progress)
        h.segmentProduced.connect(self._on_segment)
        h.historyChanged.connect(self._schedule_history_refresh)
        h.modelStateChanged.connect(self._on_model_state)
        self.jobs.cancelRequested.connect(self.cancel_job)
        self.jobs.jobActivated.connect(self._show_job)
        self.history.recordActivated.connect(lambda rid: self._tasks.spawn(self.open_record(rid)))
        self.history.deleteRequested.connect(lambda rid: self._tasks.spawn(self._delete_record(rid)))
        self.view.segmentEdited.connect(self._on_segment_edited)
        self.view.playRequested.connect(self._on_play)
        self.options_bar.modelChosen.connect(lambda ref: self._tasks.spawn(self._switch_model(ref)))
        self._history_timer = QTimer(self)
        self._history_timer.setSingleShot(True)
        self._history_timer.setInterval(100)
        self._history_timer.timeout.connect(self.refresh_history)

    # --- queue ---------------------------------------------------------------------------

    def enqueue(self, paths) -> list[str]:
        """Queue files for transcription with the current options; returns their job ids."""
        ids = []
        for p in paths:
            path = Path(p)
            job_id = f"tx-{next(_panel_jobs)}"
            self._queue.append((job_id, path, self.options_bar.options()))
            self._job_paths[job_id] = path
            self.jobs.add_job(job_id, path.name, str(path))
            ids.append(job_id)
        if self._running is None and self._queue:
            self._running = "starting"
            self._tasks.spawn(self._drain(), "running the transcription queue")
        return ids

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open audio or video", "", MEDIA_FILTER)
        if paths:
            self.enqueue(paths)

    def cancel_job(self, job_id: str) -> None:
        queued = [q for q in self._queue if q[0] == job_id]
        if queued:
            self._queue.remove(queued[0])
            self._set_job_state(job_id, JobState.CANCELLED)
        elif job_id == self._running:
            self.host.cancel(job_id)
            self.status.setText("Cancelling…")

    def is_busy(self) -> bool:
        return self._running is not None

    async def _drain(self) -> None:
        try:
            while self._queue:
                job_id, path, options = self._queue.pop(0)
                await self._run_job(job_id, path, options)
        finally:
            self._running = None

    async def _run_job(self, job_id: str, path: Path, options: TranscribeOptions) -> None:
        self._running = job_id
        self._job_segments[job_id] = []
        self._show_live(job_id, path)
        self.jobs.set_running(job_id)
        self.jobStateChanged.emit(job_id, JobState.RUNNING.value)
        try:
            await self.host.transcribe(path, options, job_id=job_id)
        except Cancelled:
            self._set_job_state(job_id, JobState.CANCELLED)
            self.status.setText(f"Cancelled {path.name}; the segments decoded so far are kept in the history.")
        except FerrumError as exc:
            self._set_job_state(job_id, JobState.FAILED, str(exc))
            self.status.setText(f"Could not transcribe {path.name}.")
        else:
            self._set_job_state(job_id, JobState.DONE)
            self.status.setText(f"Finished {path.name}.")
        record_id = self._job_records.get(job_id)
        if self._shown_job == job_id:
            self._shown_job = None
            if record_id is not None:
                await self.open_record(record_id)

    def _set_job_state(self, job_id: str, state: JobState, message: str = "") -> None:
        self.jobs.set_state(job_id, state, message)
        self.jobStateChanged.emit(job_id, state.value)

    def _clear_finished(self) -> None:
        self.jobs.clear_finished()

    # --- host signals --------------------------------------------------------------------

    def _on_job_started(self, job_id: str, info) -> None:
        if job_id not in self._job_segments:
            return
        record_id = getattr(info, "record_id", None)
        if record_id is not None:
            self._job_records[job_id] = record_id
            if self._shown_job == job_id:
                self._record_id = record_id

    def _on_job_progress(self, job_id: str, progress) -> None:
        if job_id in self._job_segments:
            self.jobs.set_progress(job_id, progress.done, progress.total)

    def _on_segment(self, job_id: str, segment: Segment) -> None:
        if job_id not in self._job_segments:
            return
        self._job_segments[job_id].append(segment)
        if self._shown_job == job_id:
            self.view.append_segment(segment)
            self.view.scrollToBottom()
            self._update_actions()

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        if name == "whisper":
            self._update_model_state(state, message)

    def _update_model_state(self, state: str, message: str) -> None:
        text = {"loading": f"Loading the speech model… {message}", "reloading": f"Reloading… {message}",
                "error": f"The speech model is not available: {message}"}.get(state, "")
        self.status.setText(text)
        if state == "ready":
            self.options_bar.set_models(self.host.whisper_models(), self.host.settings.whisper_model)

    async def _switch_model(self, ref: str) -> None:
        if ref == self.host.settings.whisper_model:
            return
        await self.host.reload(self.host.settings.with_changes(whisper_model=ref))

    # --- the transcript view ---------------------------------------------------------------

    def _show_live(self, job_id: str, path: Path) -> None:
        self._shown_job = job_id
        self._record_id = self._job_records.get(job_id)
        self._audio_path = str(path)
        self._transcript = None
        self.title.setText(f"{path.name} — transcribing…")
        self.view.set_segments(self._job_segments.get(job_id, []))
        self._update_actions()

    def _show_job(self, job_id: str) -> None:
        if job_id == self._running:
            self._show_live(job_id, self._job_paths[job_id])
        elif job_id in self._job_records:
            self._tasks.spawn(self.open_record(self._job_records[job_id]))

    def show_record(self, record_id: int, segment_id: int | None = None, play: bool = False) -> None:
        """Slot form of ``open_record`` (e.g. for the Search panel's ``openTranscript``)."""
        self._tasks.spawn(self.open_record(record_id, segment_id, play), "opening the transcript")

    async def open_record(self, record_id: int, segment_id: int | None = None, play: bool = False) -> None:
        """Show a history record (and select/scroll to ``segment_id``)."""
        record = await self.host.load_history(record_id)
        self._shown_job = None
        self._record_id = record.id
        self._audio_path = record.audio_path
        self._transcript = record.transcript
        self.view.set_segments(record.transcript.segments)
        name = Path(record.source).name or record.source
        self.title.setText(f"{name} — {record.status.value}" if record.status.value != "done" else name)
        if segment_id is not None and self.view.select_segment(segment_id) and play:
            self.view.play_selected()
        self._update_actions()
        self.recordShown.emit(record.id)

    def current_record_id(self) -> int | None:
        return self._record_id

    def current_transcript(self) -> Transcript | None:
        """What the view shows, edits included."""
        segments = self.view.segments()
        if not segments:
            return None
        base = self._transcript or Transcript(language="", language_probability=0.0,
                                              duration=segments[-1].end)
        return Transcript(language=base.language, language_probability=base.language_probability,
                          duration=base.duration, segments=segments, task=base.task, model_id=base.model_id)

    def _on_segment_edited(self, segment_id: int, text: str) -> None:
        if self._record_id is not None:
            self._tasks.spawn(self.host.update_segment_text(self._record_id, segment_id, text),
                              "saving your edit")

    def _on_play(self, _segment_id: int, start: float, end: float) -> None:
        if self._audio_path:
            self.host.play(self._audio_path, start, end)
        else:
            self.host.failure.emit(InvalidParameterError(
                "This transcript has no audio to play", "dictation sessions keep audio only when recording is on"))

    def _update_actions(self) -> None:
        has_text = self.view.rowCount() > 0
        self.export_action.setEnabled(has_text)
        self.play_action.setEnabled(has_text and bool(self._audio_path))
        self.index_action.setEnabled(self._record_id is not None and self._shown_job is None)

    # --- export and index ------------------------------------------------------------------

    def export_dialog(self) -> None:
        transcript = self.current_transcript()
        if transcript is None:
            return
        stem = Path(self._audio_path or "transcript").stem
        path, chosen = QFileDialog.getSaveFileName(self, "Export transcript", f"{stem}.srt",
                                                   ";;".join(EXPORT_FORMATS.values()), EXPORT_FORMATS["srt"])
        if path:
            fmt = next((f for f, flt in EXPORT_FORMATS.items() if flt == chosen), None)
            self._tasks.spawn(self.export(path, fmt), "exporting the transcript")

    async def export(self, path, fmt: str | None = None) -> Path:
        """Write the shown transcript to ``path`` (format from ``fmt`` or the file extension)."""
        transcript = self.current_transcript()
        if transcript is None:
            raise InvalidParameterError("There is no transcript to export", "open or transcribe a file first")
        path = Path(path)
        fmt = (fmt or path.suffix.lstrip(".") or "txt").lower()
        if fmt not in EXPORT_FORMATS:
            raise InvalidParameterError(f"Cannot export as '{fmt}'", "use .txt, .srt, .vtt or .json")
        if path.suffix.lower() != f".{fmt}":
            path = path.with_name(path.name + f".{fmt}")
        written = await self.host.export(transcript, path, fmt)
        self.status.setText(f"Exported to {written}")
        return written

    async def send_to_index(self) -> None:
        if self._record_id is None:
            return
        self.status.setText("Adding the transcript to the search index…")
        await self.host.index_transcript(self._record_id)
        self.status.setText("The transcript is now searchable in the Search panel.")

    # --- history ---------------------------------------------------------------------------

    def _schedule_history_refresh(self) -> None:
        self._history_timer.start()

    def refresh_history(self) -> None:
        self._tasks.spawn(self._refresh_history(), "reading the history")

    async def _refresh_history(self) -> None:
        entries = await self.host.list_history()
        self.history.set_entries(entries)
        self.historyRefreshed.emit()

    async def _delete_record(self, record_id: int) -> None:
        await self.host.delete_history(record_id)
        if record_id == self._record_id and self._shown_job is None:
            self._record_id = None
            self._transcript = None
            self.view.clear_segments()
            self.title.setText("No transcript open")
            self._update_actions()

    # --- drag and drop ---------------------------------------------------------------------

    def dragEnterEvent(self, event):  # noqa: N802 - Qt override
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event):  # noqa: N802 - Qt override
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.enqueue(paths)
            event.acceptProposedAction()

    def closeEvent(self, event):  # noqa: N802 - Qt override
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the queue and any pending panel work (the window is closing)."""
        self._queue.clear()
        self._history_timer.stop()
        if self._running not in (None, "starting"):
            self.host.cancel(self._running)
        self._tasks.cancel_all()


def _group(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(8, 8, 8, 8)
    layout.addWidget(widget)
    return box
