"""Transcribe panel: a queue of files run one at a time through the host, the live transcript
(editable, click to play), export, and the history of past transcripts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from executors.audio.files import select_media
from executors.core.errors import InvalidParameterError
from executors.transcripts.exporters import export_target
from executors.transcripts.results import Segment, Transcript

from ..watch.controller import watch_controller
from ..widgets.actions import group_box, text_tool_button
from ..widgets.elided_label import ElidedLabel
from ..widgets.job_list import JobList, JobState
from ..widgets.tasks import TaskSet
from ..widgets.transcribe_options import TranscribeOptionsBar
from ..widgets.transcript_view import TranscriptView
from .transcribe_actions import build_transcript_actions
from .transcribe_export import ExportDialog
from .transcribe_history import HistoryPane
from .transcribe_queue import TranscriptionQueue, selection_notices

MEDIA_FILTER = ("Audio and video (*.wav *.flac *.mp3 *.m4a *.ogg *.opus *.aac *.wma *.mp4 *.mkv *.mov "
                "*.webm *.avi);;All files (*)")


class TranscribePanel(QWidget):
    """Panel API: ``enqueue(paths)``, ``open_files()``, ``await export(path)``,
    ``await open_record(record_id, segment_id)``, ``await send_to_index()``, ``cancel_job(job_id)``."""

    jobStateChanged = Signal(str, str)   # job_id, JobState value
    recordShown = Signal(int)            # record id now in the transcript view
    historyRefreshed = Signal()
    noticeRequested = Signal(str, str, str, int)  # message, hint, level, timeout ms (0: stays): for the window

    def __init__(self, host, parent=None):
        super().__init__(parent)
        self.host = host
        self._tasks = TaskSet(host.failure.emit)
        self._saves = TaskSet(host.failure.emit)  # edits and renames on their way to the record (Export waits)
        self._settings = getattr(parent, "qsettings", None)  # the window's QSettings (none in some tests)
        self.queue = TranscriptionQueue(host, self)
        self._shown_job: str | None = None      # job whose live segments the view follows
        self._record_id: int | None = None      # history record shown in the view
        self._audio_path: str | None = None
        self._transcript: Transcript | None = None
        self._build()
        self._connect()
        self.refresh_history()
        watch_controller(host).attach(self)  # a watched folder's new recordings come to this queue

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        self.options_bar = TranscribeOptionsBar(self.host.whisper_models(), self.host.settings.whisper_model)
        if self._settings is not None:
            self.options_bar.restore(self._settings)
        self.open_button = text_tool_button(self, "Open…", QStyle.StandardPixmap.SP_DialogOpenButton,
                                            "Add audio or video files to the queue (the arrow: a whole folder)",
                                            self.open_files)
        self.open_button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(self.open_button)
        menu.addAction(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogOpenButton), "Open files…",
                       self.open_files)
        menu.addAction(self.style().standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon), "Open folder…",
                       self.open_folder)
        self.open_button.setMenu(menu)
        self.clear_button = text_tool_button(self, "Clear finished", QStyle.StandardPixmap.SP_DialogResetButton,
                                             "Remove finished jobs from the queue", self._clear_finished)
        self.clear_button.setAutoRaise(True)
        self.jobs = JobList()
        self.history_pane = HistoryPane(self.host, lambda rid: rid in self.queue.active_records(), self)
        self.history = self.history_pane.list
        queue_box = group_box("Queue", self.jobs)
        queue_buttons = QHBoxLayout()  # under the queue they fill, not beside the options: the window stays narrow
        queue_buttons.addWidget(self.open_button)
        queue_buttons.addStretch(1)
        queue_buttons.addWidget(self.clear_button)
        queue_box.layout().addLayout(queue_buttons)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(queue_box)
        left.addWidget(self.history_pane)

        # A long file name must not push the queue narrower: the title gives way ("…", full name in its tooltip).
        self.title = ElidedLabel(mode=Qt.TextElideMode.ElideMiddle)
        self.title.setStyleSheet("font-weight:600;")
        self.view = TranscriptView()
        self._set_title("No transcript open")
        build_transcript_actions(self)
        view_bar = QHBoxLayout()
        view_bar.setSpacing(6)
        for action in (self.play_action, self.stop_action, self.index_action, self.export_action):
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            view_bar.addWidget(button)
        view_bar.addStretch(1)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.title)  # a line of its own: the buttons beside it left it no room
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
        layout.addWidget(self.options_bar)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)
        self._update_model_state(*self.host.model_state("whisper"))
        self._update_actions()

    def edit_actions(self) -> list:
        """What the main window lists in its Edit menu for this panel."""
        return [self.undo_action, self.redo_action, self.revert_action]

    def _set_title(self, text: str) -> None:
        self.title.setText(text)

    def _connect(self) -> None:
        self.host.modelStateChanged.connect(self._on_model_state)
        q = self.queue
        q.jobQueued.connect(lambda job_id, path: self.jobs.add_job(job_id, path.name, str(path)))
        q.jobRunning.connect(self._on_job_running)
        q.recordAssigned.connect(self._on_record_assigned)
        q.progressed.connect(self.jobs.set_progress)
        q.segmentAdded.connect(self._on_segment)
        q.jobEnded.connect(self._on_job_ended)
        q.noticed.connect(lambda _job, message, hint: self.noticeRequested.emit(message, hint, "warning", 0))
        self.jobs.cancelRequested.connect(self.cancel_job)
        self.jobs.jobActivated.connect(self._show_job)
        self.history_pane.recordActivated.connect(lambda rid: self._tasks.spawn(self.open_record(rid)))
        self.history_pane.recordDeleted.connect(self._on_record_deleted)
        self.history_pane.indexRequested.connect(lambda rid: self._tasks.spawn(self.send_to_index(rid)))
        self.history_pane.refreshed.connect(self.historyRefreshed)
        self.view.segmentEdited.connect(self._on_segment_edited)
        self.view.itemSelectionChanged.connect(self._update_actions)
        self.view.playRequested.connect(self._on_play)
        self.view.speakerRenamed.connect(self._on_speaker_renamed)
        self.options_bar.modelChosen.connect(lambda ref: self._tasks.spawn(self._switch_model(ref)))
        self.options_bar.changed.connect(self._save_options)

    # --- queue ---------------------------------------------------------------------------

    def enqueue(self, paths) -> list[str]:
        """Queue files for transcription with the current options; folders give their audio and video
        files (subfolders too), and what was skipped is told. Returns the job ids."""
        chosen = select_media(paths)
        options = replace(self.options_bar.options(), batch_windows=max(1, self.host.settings.batch_size),
                          chunked=self.host.settings.fast_long_files)
        ids = self.queue.enqueue(chosen.files, options) if chosen.files else []
        self._tell_selection(chosen)
        return ids

    def _tell_selection(self, chosen) -> None:
        for message, hint, level, timeout_ms in selection_notices(chosen):
            self.noticeRequested.emit(message, hint, level, timeout_ms)

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open audio or video", "", MEDIA_FILTER)
        if paths:
            self.enqueue(paths)

    def open_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Transcribe every audio and video file of a folder")
        if folder:
            self.enqueue([folder])

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
        if self._shown_job == job_id:
            self._show_ended(job_id, state)

    def _clear_finished(self) -> None:
        self.jobs.clear_finished()

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        if name == "whisper":
            self._update_model_state(state, message)

    def _update_model_state(self, state: str, message: str) -> None:
        text = {"loading": f"Loading the speech model… {message}", "reloading": f"Reloading… {message}",
                "error": f"The speech model is not available: {message}"}.get(state, "")
        self.status.setText(text)
        if state == "ready":  # a refused model is not listed: the one kept runs
            self.options_bar.set_models(self.host.whisper_models(), self.host.settings.whisper_model,
                                        self.host.multilingual())

    async def _switch_model(self, ref: str) -> None:
        if ref == self.host.settings.whisper_model:
            return
        await self.host.reload(self.host.settings.with_changes(whisper_model=ref))
        if self._settings is not None:  # what is in effect now (a model that failed was not kept)
            self.host.settings.save(self._settings)

    def _save_options(self) -> None:
        if self._settings is not None:
            self.options_bar.save(self._settings)

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

    def _show_ended(self, job_id: str, state: str) -> None:
        """The job shown live ended: the view keeps what it holds (the user's edits too), completed by the
        transcript the job returned; the history is not read again."""
        self._shown_job = None
        name = self.queue.path(job_id).name
        transcript = self.queue.result(job_id)
        if transcript is not None:
            self._transcript = transcript
            self.view.complete(transcript.segments)
        self._set_title(name if state == "done" else f"{name} — {state}")
        self._update_actions()
        if self._record_id is not None:
            self.recordShown.emit(self._record_id)

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
        self.view.set_segments(record.transcript.segments, record.transcript.speaker_names,
                               getattr(record, "original_texts", None))
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
            self._saves.spawn(self.host.update_segment_text(self._record_id, segment_id, text),
                              "saving your edit")
        self._update_actions()

    def _on_speaker_renamed(self, label: str, name: str) -> None:
        if self._record_id is not None:
            self._saves.spawn(self.host.rename_speaker(self._record_id, label, name), "renaming the speaker")

    def _on_play(self, _segment_id: int, start: float, end: float) -> None:
        if self._audio_path:
            self.playback.play(self._audio_path, start, end)
        else:
            self.host.failure.emit(InvalidParameterError(
                "This transcript has no audio to play", "dictation sessions keep audio only when recording is on"))

    def _update_actions(self) -> None:
        has_text = self.view.rowCount() > 0
        self.export_action.setEnabled(has_text)
        self.play_action.setEnabled(has_text and bool(self._audio_path))
        self.index_action.setEnabled(has_text and self._record_id is not None and self._shown_job is None)
        selected = self.view.selected_segment()
        self.revert_action.setEnabled(selected is not None and self.view.is_edited(selected.id))

    # --- export and index ------------------------------------------------------------------

    def export_dialog(self) -> ExportDialog | None:
        """Open the save dialog (window-modal, not blocking); the export runs when a name is chosen."""
        if self.view.rowCount() == 0:
            return None
        dialog = ExportDialog(self, Path(self._audio_path or "transcript").stem, getattr(self.window(), "qsettings", None))
        dialog.fileSelected.connect(lambda path: self._tasks.spawn(self.export(*dialog.target(path)),
                                                                   "exporting the transcript"))
        dialog.open()
        return dialog

    async def export(self, path, fmt: str | None = None) -> Path:
        """Write the shown transcript to ``path``: in the format of its extension when it has a known
        one, else in ``fmt`` (default txt) with that extension added."""
        if self.view.rowCount() == 0:
            raise InvalidParameterError("There is no transcript to export", "open or transcribe a file first")
        path, fmt = export_target(path, fmt)
        written = await self.host.export(await self._export_source(), path, fmt)
        self.status.setText(f"Exported to {written}")
        return written

    async def _export_source(self) -> int | Transcript:
        """A saved record goes out by its id, as ``ferrum history export`` writes it, once the user's edits
        are in it; a transcript not saved, or still being decoded, as the view holds it."""
        if self._record_id is None or self._shown_job is not None:
            return self.current_transcript()
        await self._saves.join()
        return self._record_id

    async def send_to_index(self, record_id: int | None = None) -> None:
        """Add a history record (default: the one shown) to the search index."""
        record_id = record_id if record_id is not None else self._record_id
        if record_id is None:
            return
        self.status.setText("Adding the transcript to the search index…")
        await self.host.index_transcript(record_id)
        self.status.setText("The transcript is now searchable in the Search panel.")

    # --- history ---------------------------------------------------------------------------

    @property
    def delete_dialog(self):
        """The open "Delete transcript?" question, if any."""
        return self.history_pane.delete_dialog

    def refresh_history(self) -> None:
        self.history_pane.refresh()

    def _on_record_deleted(self, record_id: int) -> None:
        if record_id == self._record_id and self._shown_job is None:
            self._record_id = None
            self._transcript = None
            self.view.clear_segments()
            self._set_title("No transcript open")
            self._update_actions()

    def closeEvent(self, event):
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the queue and any pending panel work (the window is closing)."""
        watch_controller(self.host).detach(self)  # first: the queue's cancellations are not outcomes
        self.history_pane.shutdown()
        self.playback.shutdown()
        self.queue.shutdown()
        self._tasks.cancel_all()
        self._saves.cancel_all()

