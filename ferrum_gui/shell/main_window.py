"""The main window: a navigation list of panels, the notification area, menus and a status bar.

Files and folders dropped on the window (or opened, or handed over by a second launch) go to the
Transcribe queue; folders give their audio and video files. Documents dropped on the Search panel are
the panel's (it indexes them). While files are dragged over the window, it shows where they will go."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QProgressBar,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from executors.core.logs import log_error
from executors.core.types import ExecutorState

from .. import theme
from ..host.executor_host import ExecutorHost
from ..panels import PANELS, PanelSpec
from ..widgets.drop_overlay import DropOverlay, FileDrops, drop_summary
from .about import show_about
from .notifications import NotificationArea
from .window_menus import build_menus

log = logging.getLogger(__name__)

MEDIA_FILTER = ("Audio and video (*.wav *.flac *.mp3 *.ogg *.opus *.m4a *.aac *.wma *.webm *.mp4 *.mkv *.mov *.avi);;"
                "All files (*)")
# Around a panel's icon and title in the navigation list: style.qss's paddings (list 2 × 6, item 2 × 10),
# the gap between icon and title, the border, and room to spare.
NAV_PADDING = 60
_STATE_TEXT = {"idle": "waiting", "loading": "loading…", "reloading": "reloading…", "ready": "ready",
               "error": "failed"}


class ModelIndicator(QWidget):
    """Status-bar chip: "Whisper: loading…" with a busy bar while the model loads."""

    def __init__(self, name: str, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.name, self.title = name, title
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setFixedSize(QSize(60, 10))
        self.bar.setTextVisible(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(self.label)
        row.addWidget(self.bar)
        self.state, self.busy = "idle", False
        self.set_state("idle", "")

    def set_state(self, state: str, message: str) -> None:
        self.state, self.busy = state, False
        self.label.setText(f"{self.title}: {_STATE_TEXT.get(state, state)}")
        self.setToolTip(message)
        self.bar.setVisible(state in ("loading", "reloading"))

    def set_busy(self, busy: bool) -> None:
        """Between "ready" and "working…" as the executor's status says (a job is running on it)."""
        if self.state == "ready" and busy != self.busy:
            self.busy = busy
            self.label.setText(f"{self.title}: {'working…' if busy else 'ready'}")


class MainWindow(FileDrops, QMainWindow):
    panelChanged = Signal(str)

    def __init__(self, host: ExecutorHost, qsettings: QSettings | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self.qsettings = qsettings
        self.setWindowTitle("Ferrum Desktop")
        self.setWindowIcon(theme.app_icon())
        self.setAcceptDrops(True)
        self.panels: dict[str, QWidget] = {}
        self._build_body()
        build_menus(self)
        self._build_status_bar()
        self.setMinimumSize(self.minimumSizeHint().expandedTo(QSize(880, 580)))
        host.failure.connect(self._on_failure)
        host.modelStateChanged.connect(self._on_model_state)
        host.statusUpdated.connect(self._on_status)
        for name in self.indicators:
            self._on_model_state(name, *host.model_state(name))
        self.anywhere = self._dictate_anywhere()
        if qsettings is not None and qsettings.contains("window/geometry"):
            self.restoreGeometry(qsettings.value("window/geometry"))
        else:
            self.resize(1200, 780)

    # ---- layout --------------------------------------------------------------------------
    def _build_body(self) -> None:
        self.nav = QListWidget()
        self.nav.setObjectName("NavList")
        self.nav.setIconSize(QSize(20, 20))
        self.nav.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.stack = QStackedWidget()
        self.specs: list[PanelSpec] = []
        for spec in PANELS:
            try:
                panel = spec.load()(self.host, self)
            except ImportError as exc:  # a panel whose module is not installed yet: leave it out
                log.warning("panel %s unavailable: %s", spec.key, exc)
                continue
            self.specs.append(spec)
            self.panels[spec.key] = panel
            self.stack.addWidget(panel)
            item = QListWidgetItem(theme.icon(spec.icon), spec.title)
            item.setToolTip(f"{spec.tooltip} ({self._shortcut_text(len(self.specs))})")
            item.setSizeHint(QSize(0, 38))
            self.nav.addItem(item)
        self.nav.currentRowChanged.connect(self._on_nav)
        longest = max((self.nav.fontMetrics().horizontalAdvance(spec.title) for spec in self.specs), default=0)
        self.nav.setFixedWidth(longest + self.nav.iconSize().width() + NAV_PADDING)
        self.notifications = NotificationArea()
        transcribe = self.panels.get("transcribe")
        if transcribe is not None and hasattr(transcribe, "noticeRequested"):
            transcribe.noticeRequested.connect(self.notifications.notify)
        search = self.panels.get("search")
        if search is not None and hasattr(search, "openTranscript") and "transcribe" in self.panels:
            search.openTranscript.connect(self.open_transcript)

        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.notifications)
        column.addWidget(self.stack, 1)
        body = QWidget()
        row = QHBoxLayout(body)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.nav)
        row.addWidget(right, 1)
        self.setCentralWidget(body)
        self.drop_overlay = DropOverlay(body)
        if self.specs:
            self.nav.setCurrentRow(0)

    def _dictate_anywhere(self):
        """Global shortcut, tray icon and caption overlay around the Dictation panel."""
        if "dictation" not in self.panels:
            return None
        from ..anywhere.controller import DictateAnywhere

        return DictateAnywhere(self, self.panels["dictation"], self.qsettings)

    @staticmethod
    def _shortcut_text(number: int) -> str:
        return QKeySequence(f"Ctrl+{number}").toString(QKeySequence.SequenceFormat.NativeText)

    def make_action(self, text: str, icon: str, shortcut, slot, tip: str = "") -> QAction:
        action = QAction(theme.icon(icon), text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip or text.replace("…", ""))
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work even where the menu bar is hidden
        return action

    def _build_status_bar(self) -> None:
        self.indicators = {"whisper": ModelIndicator("whisper", "Speech model"),
                           "embedding": ModelIndicator("embedding", "Embedding model")}
        for indicator in self.indicators.values():
            self.statusBar().addPermanentWidget(indicator)

    # ---- panels --------------------------------------------------------------------------
    def panel_keys(self) -> list[str]:
        return [spec.key for spec in self.specs]

    def current_panel_key(self) -> str | None:
        row = self.nav.currentRow()
        return self.specs[row].key if 0 <= row < len(self.specs) else None

    def show_panel(self, key: str) -> QWidget:
        self.nav.setCurrentRow(self.panel_keys().index(key))
        return self.panels[key]

    def _on_nav(self, row: int) -> None:
        if 0 <= row < len(self.specs):
            self.stack.setCurrentIndex(row)
            self.setWindowTitle(f"{self.specs[row].title} — Ferrum Desktop")
            self.panelChanged.emit(self.specs[row].key)

    def focus_search(self) -> None:
        if "search" not in self.panels:
            return
        panel = self.show_panel("search")
        (getattr(panel, "focus_search", None) or panel.setFocus)()

    def open_transcript(self, record_id: int, segment_id: int = -1) -> None:
        """Show a history record in the Transcribe panel (a transcript hit from Search)."""
        self.show_panel("transcribe").show_record(record_id, segment_id if segment_id >= 0 else None)

    # ---- files ---------------------------------------------------------------------------
    def enqueue(self, paths: list[str | Path]) -> bool:
        """Send files and folders to the Transcribe panel's queue (from Open…, drops, the command
        line or a second launch); the panel expands folders and says what it skipped."""
        panel = self.panels.get("transcribe")
        if panel is None or not paths:
            return False
        self.show_panel("transcribe")
        panel.enqueue([Path(p) for p in paths])
        return True

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add files to transcribe", str(Path.home()), MEDIA_FILTER)
        self.enqueue(paths)

    def open_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to transcribe", str(Path.home()))
        if folder:
            self.enqueue([folder])

    def drop_text(self, paths: list[str]) -> str:
        return f"Drop to transcribe {drop_summary(paths)}" if paths and "transcribe" in self.panels else ""

    def take_drop(self, paths: list[str]) -> bool:
        return self.enqueue(paths)

    def bring_to_front(self) -> None:
        """Show this window above the others (a second launch hands over to it)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    # ---- dialogs -------------------------------------------------------------------------
    def show_preferences(self):
        from .preferences import PreferencesDialog

        dialog = PreferencesDialog(self.host, self.qsettings or QSettings(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self):
        return show_about(self)

    def _on_failure(self, error: BaseException) -> None:
        """Every background failure: into the log (with its cause's traceback), then on screen."""
        log_error(error, "ferrum.gui")
        self.notifications.show_error(error)

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        indicator = self.indicators.get(name)
        if indicator is not None:
            indicator.set_state(state, message)

    def _on_status(self, name: str, status) -> None:
        indicator = self.indicators.get(name)
        if indicator is not None:
            indicator.set_busy(status.state is ExecutorState.BUSY)

    def closeEvent(self, event):
        dictation = self.panels.get("dictation")
        if dictation is not None and not dictation.confirm_close(self.close):  # it asks first
            self.bring_to_front()
            event.ignore()
            return
        if self.qsettings is not None:
            self.qsettings.setValue("window/geometry", self.saveGeometry())
        if self.anywhere is not None:
            self.anywhere.close()
        for panel in self.panels.values():
            shutdown = getattr(panel, "shutdown", None)
            if shutdown is not None:
                shutdown()
        super().closeEvent(event)
