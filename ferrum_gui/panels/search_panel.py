"""Search panel: the sources to index (files, folders, and the transcript history), and a query
box that searches as you type, showing ranked results with the matched words highlighted.
Documents and folders dropped on the panel become sources, as with "Add files…"/"Add folder…";
audio and video dropped on it are left to the window (the Transcribe queue)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QSpinBox,
    QSplitter,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from executors.audio.files import is_media
from executors.core.errors import Cancelled, FerrumError, NotFoundError
from executors.service import FILES, TRANSCRIPTS

from .. import theme
from ..widgets.actions import panel_action
from ..widgets.drop_overlay import DropOverlay, FileDrops, drop_summary
from ..widgets.result_list import ResultList, transcript_record_id
from ..widgets.tasks import TaskSet

FILES_COLLECTION = FILES
TRANSCRIPTS_COLLECTION = TRANSCRIPTS
TRANSCRIPTS_SOURCE = "transcripts"      # the pseudo-source standing for the whole history
SEARCH_DELAY_MS = 250
PASSAGES_PER_DOCUMENT = 3  # passages fetched per result shown
SCOPES = [("Everything", None), ("Files", FILES_COLLECTION), ("Transcripts", TRANSCRIPTS_COLLECTION)]
_SETTINGS_KEY = "search/sources"
_PATH_ROLE = Qt.ItemDataRole.UserRole
_index_jobs = itertools.count(1)


class SearchPanel(FileDrops, QWidget):
    """``openTranscript(record_id, segment_id)`` asks the window to show a transcript hit
    (segment_id is -1 when the hit has none)."""

    openTranscript = Signal(int, int)
    resultsShown = Signal(str, int)     # query, number of hits
    indexingFinished = Signal(str)      # "done" | "cancelled" | "failed"
    sourcesRemoved = Signal(int)        # documents dropped from the index

    def __init__(self, host, parent=None, settings: QSettings | None = None):
        super().__init__(parent)
        self.host = host
        # Sources persist in the window's QSettings when there is one (none in most tests).
        self._settings = settings if settings is not None else getattr(parent, "qsettings", None)
        self._tasks = TaskSet(host.failure.emit)
        self._search_seq = 0
        self._index_job: str | None = None
        self._index_cancelled = False
        self._build()
        self._connect()
        self.setAcceptDrops(True)
        self.drop_overlay = DropOverlay(self)
        saved = self._settings.value(_SETTINGS_KEY, []) if self._settings is not None else []
        for path in ([saved] if isinstance(saved, str) else list(saved or [])):
            self._add_source_item(path)

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        S = QStyle.StandardPixmap
        self.sources = QListWidget()
        self.sources.setAlternatingRowColors(True)
        transcripts = QListWidgetItem(theme.icon("transcribe", 16), "Transcripts (history)")
        transcripts.setData(_PATH_ROLE, TRANSCRIPTS_SOURCE)
        transcripts.setToolTip("Every finished transcript in the history")
        self.sources.addItem(transcripts)
        self.add_files_action = panel_action(self, "Add files…", "Ctrl+Shift+O", S.SP_FileIcon, self._choose_files)
        self.add_folder_action = panel_action(self, "Add folder…", "Ctrl+Shift+D", S.SP_DirIcon, self._choose_folder)
        self.add_files_action.setIconText("Files…")  # the buttons' words; the tooltips say "Add files…"
        self.add_folder_action.setIconText("Folder…")
        self.remove_action = panel_action(self, "Remove", "Del", S.SP_TrashIcon, self.remove_selected_source)
        self.reindex_action = panel_action(self, "Re-index", "Ctrl+R", S.SP_BrowserReload,
                                           lambda: self._tasks.spawn(self.reindex(), "re-indexing"))
        self.cancel_action = panel_action(self, "Cancel", "Esc", S.SP_DialogCancelButton, self.cancel_indexing)
        self.remove_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.sources.addAction(self.remove_action)
        source_bar = QHBoxLayout()
        source_bar.setSpacing(4)
        for action in (self.add_files_action, self.add_folder_action, self.remove_action):
            source_bar.addWidget(_button(action))
        source_bar.addStretch(1)
        self.index_progress = QProgressBar()
        self.index_progress.setRange(0, 100)
        self.index_progress.setVisible(False)
        self.index_status = QLabel("Add files or folders of .txt, .md or .pdf documents to search them.")
        self.index_status.setWordWrap(True)
        index_bar = QHBoxLayout()
        index_bar.addWidget(_button(self.reindex_action))
        index_bar.addWidget(self.index_progress, 1)
        index_bar.addWidget(_button(self.cancel_action))
        box = QGroupBox("Sources")
        box_layout = QVBoxLayout(box)
        box_layout.setContentsMargins(8, 8, 8, 8)
        box_layout.addLayout(source_bar)
        box_layout.addWidget(self.sources, 1)
        box_layout.addLayout(index_bar)
        box_layout.addWidget(self.index_status)

        self.query = QLineEdit()
        self.query.setPlaceholderText("Search files and transcripts…  (Ctrl+F)")
        self.query.setClearButtonEnabled(True)
        # never "S…": the box keeps room for a few words (the placeholder's first three)
        self.query.setMinimumWidth(self.query.fontMetrics().horizontalAdvance("Search files and transcripts") + 56)
        self.query.addAction(self.style().standardIcon(S.SP_FileDialogContentsView),
                             QLineEdit.ActionPosition.LeadingPosition)
        self.hybrid = QCheckBox("Hybrid")
        self.hybrid.setChecked(True)
        self.hybrid.setToolTip("Rank by meaning and by how many of your words a passage holds; off: meaning alone")
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 100)
        self.top_k.setValue(10)
        self.top_k.setPrefix("Top ")
        self.top_k.setToolTip("How many results to show")
        self.scope = QComboBox()
        for name, collection in SCOPES:
            self.scope.addItem(name, collection)
        query_bar = QHBoxLayout()
        query_bar.setSpacing(8)
        query_bar.addWidget(self.query, 1)
        query_bar.addWidget(self.scope)
        query_bar.addWidget(self.hybrid)
        query_bar.addWidget(self.top_k)
        self.results = ResultList()
        self.result_status = QLabel()
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.setSpacing(8)
        right_layout.addLayout(query_bar)
        right_layout.addWidget(self.results, 1)
        right_layout.addWidget(self.result_status)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(box)
        split.addWidget(right)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.addWidget(split)
        self._set_indexing(False)

    def _connect(self) -> None:
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DELAY_MS)
        self._debounce.timeout.connect(self.search_now)
        self.query.textChanged.connect(lambda _t: self._debounce.start())
        self.query.returnPressed.connect(self.search_now)
        for signal in (self.hybrid.toggled, self.top_k.valueChanged, self.scope.currentIndexChanged):
            signal.connect(lambda *_: self._debounce.start())
        self.results.resultActivated.connect(self.open_result)
        self.host.jobProgress.connect(self._on_progress)
        self.host.modelStateChanged.connect(self._on_model_state)

    def focus_search(self) -> None:
        """Ctrl+F (the main window's Find action) lands here."""
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    # --- sources -------------------------------------------------------------------------

    def source_paths(self) -> list[str]:
        items = (self.sources.item(i) for i in range(self.sources.count()))
        return [it.data(_PATH_ROLE) for it in items if it.data(_PATH_ROLE) != TRANSCRIPTS_SOURCE]

    def add_sources(self, paths, index: bool = True) -> None:
        """Add files or folders as sources and (by default) index them now."""
        added = [str(p) for p in paths if self._add_source_item(str(p))]
        self._save_sources()
        if added and index:
            self._tasks.spawn(self.index_files(added), "indexing the new sources")

    def _add_source_item(self, path: str) -> bool:
        if not path or path in self.source_paths():
            return False
        is_dir = not Path(path).suffix
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon if is_dir else QStyle.StandardPixmap.SP_FileIcon)
        item = QListWidgetItem(icon, Path(path).name or path)
        item.setData(_PATH_ROLE, path)
        item.setToolTip(path)
        self.sources.addItem(item)
        return True

    def remove_selected_source(self) -> None:
        """Forget the selected sources and drop their documents from the index."""
        removed = []
        for item in self.sources.selectedItems():
            if item.data(_PATH_ROLE) != TRANSCRIPTS_SOURCE:
                removed.append(item.data(_PATH_ROLE))
                self.sources.takeItem(self.sources.row(item))
        self._save_sources()
        if removed:
            self._tasks.spawn(self._unindex(removed), "removing sources from the index")

    async def _unindex(self, paths: list[str]) -> None:
        count = await self.host.remove_sources(paths, FILES_COLLECTION)
        self.index_status.setText(f"Removed {count} document(s) from the index.")
        self.sourcesRemoved.emit(count)
        if self.query.text().strip():
            self.search_now()

    def _save_sources(self) -> None:
        if self._settings is not None:
            self._settings.setValue(_SETTINGS_KEY, self.source_paths())

    def drop_text(self, paths: list[str]) -> str:
        if not paths or all(is_media(Path(p)) for p in paths):
            return ""
        return f"Drop to make {drop_summary(paths)} searchable"

    def take_drop(self, paths: list[str]) -> bool:
        if not self.drop_text(paths):
            return False
        self.add_sources(paths)
        return True

    def _choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add documents", "",
                                                "Documents (*.txt *.md *.pdf *.srt *.vtt *.json);;All files (*)")
        self.add_sources(paths)

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add a folder of documents")
        if path:
            self.add_sources([path])

    # --- indexing --------------------------------------------------------------------------

    def is_indexing(self) -> bool:
        return self._index_job is not None

    async def reindex(self) -> str:
        """Index every source again (unchanged files are skipped by the index) and the history."""
        outcome, messages = "done", []
        if self.source_paths():
            outcome, message = await self._index_files(self.source_paths())
            messages.append(message)
        if outcome == "done":
            outcome, message = await self._index_transcripts()
            messages.append(message)
        return self._finish(outcome, " · ".join(messages))

    async def index_files(self, paths: list[str]) -> str:
        """Index files or folders into the files collection; returns "done", "cancelled" or "failed"."""
        return self._finish(*await self._index_files(paths))

    async def index_transcripts(self) -> str:
        """Add every finished (or partly kept) transcript in the history to the index."""
        return self._finish(*await self._index_transcripts())

    async def _index_files(self, paths: list[str]) -> tuple[str, str]:
        if self.is_indexing():
            return "busy", "Indexing is already running; wait for it or cancel it."
        job_id = f"index-panel-{next(_index_jobs)}"
        self._set_indexing(True, job_id)
        self.index_status.setText(f"Indexing {len(paths)} source(s)…")
        try:
            report = await self.host.index_paths(paths, FILES_COLLECTION, job_id=job_id)
        except Cancelled:
            return "cancelled", "Indexing cancelled; documents finished before that stay searchable."
        except FerrumError:
            return "failed", "Indexing failed; see the notification for details."
        finally:
            self._set_indexing(False)
        return "done", report.summary()

    async def _index_transcripts(self) -> tuple[str, str]:
        if self.is_indexing():
            return "busy", "Indexing is already running; wait for it or cancel it."
        job_id = f"index-panel-{next(_index_jobs)}"
        self._set_indexing(True, job_id)
        self.index_status.setText("Indexing the transcripts…")
        try:
            report = await self.host.index_transcripts(job_id=job_id)
        except Cancelled:
            return "cancelled", "Indexing cancelled; transcripts finished before that stay searchable."
        except FerrumError:
            return "failed", "Indexing the transcripts failed; see the notification for details."
        finally:
            self._set_indexing(False)
        count = report.files_added + report.files_updated + report.files_skipped
        return "done", f"{count} transcript(s) are searchable."

    def _finish(self, outcome: str, message: str) -> str:
        self.index_status.setText(message)
        if outcome != "busy":
            self.indexingFinished.emit(outcome)
            if self.query.text().strip():
                self.search_now()
        return outcome

    def cancel_indexing(self) -> None:
        if self._index_job is None:
            return
        self._index_cancelled = True
        self.host.cancel(self._index_job)
        self.index_status.setText("Cancelling…")

    def _set_indexing(self, running: bool, job_id: str | None = None) -> None:
        self._index_job = job_id if running else None
        if running:
            self._index_cancelled = False
            self.index_progress.setValue(0)
        self.index_progress.setVisible(running)
        self.cancel_action.setEnabled(running)
        self.reindex_action.setEnabled(not running)

    def _on_progress(self, job_id: str, progress) -> None:
        # The indexer reports files done of all files, and chunks done within the current file.
        if job_id == self._index_job and progress.unit != "chunks":
            self.index_progress.setValue(round(100 * progress.fraction))
            name = Path(progress.message).name if progress.message else ""
            self.index_status.setText(f"Indexing {name} ({progress.done:.0f} of {progress.total:.0f} {progress.unit})")

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        if name == "embedding" and state in ("loading", "reloading", "error"):
            self.result_status.setText("Loading the embedding model…" if state != "error"
                                       else f"Search is unavailable: {message}")
        elif name == "embedding" and state == "ready":
            self.result_status.setText("")

    # --- searching -------------------------------------------------------------------------

    def search_now(self) -> None:
        self._debounce.stop()
        self._tasks.spawn(self.search(self.query.text()), "searching")

    async def search(self, query: str) -> list:
        """Run one query; results of a query overtaken by newer typing are dropped (and a search
        still waiting for typing to pause is overtaken by this one)."""
        self._debounce.stop()
        self._search_seq += 1
        seq = self._search_seq
        query = query.strip()
        if not query:
            self.results.set_results([], empty_text=ResultList.placeholder_text)
            self.result_status.setText("")
            return []
        started = time.perf_counter()
        self.result_status.setText("Searching…")
        shown = False
        try:
            # a few passages per document, so each of the top-k documents can show its best ones
            hits = await self.host.search(query, k=self.top_k.value() * PASSAGES_PER_DOCUMENT,
                                          hybrid=self.hybrid.isChecked(), collection=self.scope.currentData())
            if seq != self._search_seq:
                return hits
            self.results.set_results(hits, query, limit=self.top_k.value(),
                                     empty_text=f"No matches for “{query}”. Index more sources, or try other words.")
            shown = True
        finally:
            if seq == self._search_seq and not shown:
                self.result_status.setText("The search failed; the notification above says why.")
        documents = self.results.count()
        ms = (time.perf_counter() - started) * 1000
        self.result_status.setText(f"{documents} result{'s' if documents != 1 else ''} "
                                   f"({len(hits)} passages) in {ms:.0f} ms")
        self.resultsShown.emit(query, documents)
        return hits

    def open_result(self, hit) -> None:
        record_id = transcript_record_id(hit)
        if record_id is not None:
            segment_id = hit.focus_segment_id  # the segment holding the match
            self.openTranscript.emit(record_id, int(segment_id) if segment_id is not None else -1)
            return
        path = Path(str(hit.source))
        if not path.is_file():
            self.host.failure.emit(NotFoundError(
                f"{path.name} is no longer at {path.parent}",
                "it was moved or deleted since it was indexed; press Re-index to bring the index up to date"))
        elif not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            self.host.failure.emit(NotFoundError(
                f"No application is set up to open {path.name}",
                f"choose a default application for {path.suffix or 'these'} files in your system settings"))

    def shutdown(self) -> None:
        self._debounce.stop()
        if self._index_job is not None:
            self.host.cancel(self._index_job)
        self._tasks.cancel_all()


def _button(action: QAction) -> QToolButton:
    button = QToolButton()
    button.setDefaultAction(action)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    return button
