"""Transcribe panel: a queue of files run one at a time through the host, the live transcript
(editable, click to play), export, and the history of past transcripts."""

from __future__ import annotations

from dataclasses import replace

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from executors.core.errors import InvalidParameterError
from executors.transcripts.exporters import FORMATS, export_format
from executors.transcripts.results import Segment, Transcript

from ..widgets.actions import panel_action
from ..widgets.history_list import HistoryList
from ..widgets.job_list import JobList, JobState
from ..widgets.tasks import TaskSet
from ..widgets.transcribe_options import TranscribeOptionsBar
from ..widgets.transcript_view import TranscriptView
from .transcribe_queue import TranscriptionQueue

MEDIA_FILTER = ("Audio and video (*.wav *.flac *.mp3 *.m4a *.ogg *.opus *.aac *.wma *.mp4 *.mkv *.mov "
                "*.webm *.avi);;All files (*)")
EXPORT_FORMATS = {name: fmt.file_filter for name, fmt in FORMATS.items()}  # the save dialog's filters


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
        self.queue = TranscriptionQueue(host, self)
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

        self.title = QLabel()
        self.title.setStyleSheet("font-weight:600;")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A long file name must not push the queue narrower: the title gives way (full name in its tooltip).
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = TranscriptView()
        self._set_title("No transcript open")
        self.export_action = panel_action(self, "Export…", "Ctrl+E", QStyle.StandardPixmap.SP_DialogSaveButton,
                                          self.export_dialog)
        self.index_action = panel_action(self, "Add to search", "Ctrl+Shift+I", QStyle.StandardPixmap.SP_FileDialogContentsView,
                                         lambda: self._tasks.spawn(self.send_to_index(), "indexing the transcript"))
        self.play_action = panel_action(self, "Play segment", "Ctrl+P", QStyle.StandardPixmap.SP_MediaPlay,
                                        self.view.play_selected)
        self.stop_action = panel_action(self, "Stop", "Ctrl+.", QStyle.StandardPixmap.SP_MediaStop,
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
        split.setSizes([560, 640])
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

    def _set_title(self, text: str) -> None:
        self.title.setText(text)
        self.title.setToolTip(text)

    def _tool_button(self, text, icon, tip, slot) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setIcon(self.style().standardIcon(icon))
        button.setToolTip(tip)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.clicked.connect(slot)
        return button

    def _connect(self) -> None:
        self.host.historyChanged.connect(self._schedule_history_refresh)
        self.host.modelStateChanged.connect(self._on_model_state)
        q = self.queue
        q.jobQueued.connect(lambda job_id, path: self.jobs.add_job(job_id, path.name, str(path)))
        q.jobRunning.connect(self._on_job_running)
        q.recordAssigned.connect(self._on_record_assigned)
        q.progressed.connect(self.jobs.set_progress)
        q.segmentAdded.connect(self._on_segment)
        q.jobEnded.connect(self._on_job_ended)
        self.jobs.cancelRequested.connect(self.cancel_job)
        self.jobs.jobActivated.connect(self._show_job)
        self.history.recordActivated.connect(lambda rid: self._tasks.spawn(self.open_record(rid)))
        self.history.deleteRequested.connect(lambda rid: self._tasks.spawn(self._delete_record(rid)))
        self.history.indexRequested.connect(lambda rid: self._tasks.spawn(self.send_to_index(rid)))
        self.view.segmentEdited.connect(self._on_segment_edited)
        self.view.playRequested.connect(self._on_play)
        self.view.speakerRenamed.connect(self._on_speaker_renamed)
        self.options_bar.modelChosen.connect(lambda ref: self._tasks.spawn(self._switch_model(ref)))
        self._history_timer = QTimer(self)
        self._history_timer.setSingleShot(True)
        self._history_timer.setInterval(100)
        self._history_timer.timeout.connect(self.refresh_history)

    # --- queue ---------------------------------------------------------------------------

    def enqueue(self, paths) -> list[str]:
        """Queue files for transcription with the current options; returns their job ids."""
        options = replace(self.options_bar.options(), batch_windows=max(1, self.host.settings.batch_size))
        return self.queue.enqueue(paths, options)

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open audio or video", "", MEDIA_FILTER)
        if paths:
            self.enqueue(paths)

    def cancel_job(self, job_id: str) -> None:
        if self.queue.cancel(job_id) and job_id == self.queue.running_job:
            self.status.setText("Cancelling…")

    def is_busy(self) -> bool:
        return self.queue.is_busy()

    def _on_job_running(self, job_id: str, path: Path) -> None:
        self.jobs.set_running(job_id)
        self._show_live(job_id)
        self.jobStateChanged.emit(job_id, JobState.RUNNING.value)

    def _on_record_assigned(self, job_id: str, record_id: int) -> None:
        if self._shown_job == job_id:
            self._record_id = record_id

    def _on_segment(self, job_id: str, segment: Segment) -> None:
        if self._shown_job == job_id:
            self.view.append_segment(segment)
            self.view.scrollToBottom()
            self._update_actions()

    def _on_job_ended(self, job_id: str, state: str, message: str) -> None:
        self.jobs.set_state(job_id, JobState(state), message)
        name = self.queue.path(job_id).name
        self.status.setText({"done": f"Finished {name}.",
                             "failed": f"Could not transcribe {name}; see the notification above.",
                             "cancelled": f"Cancelled {name}; the segments decoded so far are kept in "
                                          "the history."}[state])
        self.jobStateChanged.emit(job_id, state)
        record_id = self.queue.record_id(job_id)
        if self._shown_job == job_id:
            self._shown_job = None
            if record_id is not None:
                self.show_record(record_id)
            else:  # it failed before anything was saved (e.g. not an audio file)
                self._set_title(f"{name} — {state}")
                self._update_actions()

    def _clear_finished(self) -> None:
        self.jobs.clear_finished()

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        if name == "whisper":
            self._update_model_state(state, message)

    def _update_model_state(self, state: str, message: str) -> None:
        text = {"loading": f"Loading the speech model… {message}", "reloading": f"Reloading… {message}",
                "error": f"The speech model is not available: {message}"}.get(state, "")
        self.status.setText(text)
        if state == "ready":
            loaded = self.host.model("whisper")
            self.options_bar.set_models(self.host.whisper_models(), self.host.settings.whisper_model,
                                        loaded.multilingual if loaded is not None else None)

    async def _switch_model(self, ref: str) -> None:
        if ref == self.host.settings.whisper_model:
            return
        await self.host.reload(self.host.settings.with_changes(whisper_model=ref))

    # --- the transcript view ---------------------------------------------------------------

    def _show_live(self, job_id: str) -> None:
        path = self.queue.path(job_id)
        self._shown_job = job_id
        self._record_id = self.queue.record_id(job_id)
        self._audio_path = str(path)
        self._transcript = None
        self._set_title(f"{path.name} — transcribing…")
        self.view.set_segments(self.queue.segments(job_id))
        self._update_actions()

    def _show_job(self, job_id: str) -> None:
        if job_id == self.queue.running_job:
            self._show_live(job_id)
        elif self.queue.record_id(job_id) is not None:
            self.show_record(self.queue.record_id(job_id))

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
        self.view.set_segments(record.transcript.segments, record.transcript.speaker_names)
        name = Path(record.source).name or record.source
        self._set_title(f"{name} — {record.status.value}" if record.status.value != "done" else name)
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
                          duration=base.duration, segments=segments, task=base.task, model_id=base.model_id,
                          speaker_names=self.view.speaker_names())

    def _on_segment_edited(self, segment_id: int, text: str) -> None:
        if self._record_id is not None:
            self._tasks.spawn(self.host.update_segment_text(self._record_id, segment_id, text),
                              "saving your edit")

    def _on_speaker_renamed(self, label: str, name: str) -> None:
        if self._record_id is not None:
            self._tasks.spawn(self.host.rename_speaker(self._record_id, label, name), "renaming the speaker")

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
        fmt = export_format(fmt, path).name
        if path.suffix.lower() != f".{fmt}":
            path = path.with_name(path.name + f".{fmt}")
        written = await self.host.export(transcript, path, fmt)
        self.status.setText(f"Exported to {written}")
        return written

    async def send_to_index(self, record_id: int | None = None) -> None:
        """Add a history record (default: the one shown) to the search index."""
        record_id = record_id if record_id is not None else self._record_id
        if record_id is None:
            return
        self.status.setText("Adding the transcript to the search index…")
        await self.host.index_transcript(record_id)
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
            self._set_title("No transcript open")
            self._update_actions()

    # --- drag and drop ---------------------------------------------------------------------

    def dragEnterEvent(self, event):
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event):
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            self.enqueue(paths)
            event.acceptProposedAction()

    def closeEvent(self, event):
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the queue and any pending panel work (the window is closing)."""
        self._history_timer.stop()
        self.queue.shutdown()
        self._tasks.cancel_all()


def _group(title: str, widget: QWidget) -> QGroupBox:
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    layout.setContentsMargins(8, 8, 8, 8)
    layout.addWidget(widget)
    return box
