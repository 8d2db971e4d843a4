"""The main window: a navigation list of panels, the notification area, menus and a status bar."""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow,
                               QMessageBox, QProgressBar, QStackedWidget, QVBoxLayout, QWidget)

from . import theme
from .host import ExecutorHost
from .notifications import NotificationArea
from .panels import PANELS, PanelSpec

log = logging.getLogger(__name__)

MEDIA_FILTER = ("Audio and video (*.wav *.flac *.mp3 *.ogg *.opus *.m4a *.aac *.wma *.webm *.mp4 *.mkv *.mov *.avi);;"
                "All files (*)")
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
        self.set_state("idle", "")

    def set_state(self, state: str, message: str) -> None:
        self.label.setText(f"{self.title}: {_STATE_TEXT.get(state, state)}")
        self.setToolTip(message)
        self.bar.setVisible(state in ("loading", "reloading"))


class MainWindow(QMainWindow):
    panelChanged = Signal(str)

    def __init__(self, host: ExecutorHost, qsettings: QSettings | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self.qsettings = qsettings
        self.setWindowTitle("Ferrum Desktop")
        self.setWindowIcon(theme.app_icon())
        self.setMinimumSize(QSize(880, 580))
        self.setAcceptDrops(True)
        self.panels: dict[str, QWidget] = {}
        self._build_body()
        self._build_actions()
        self._build_status_bar()
        host.failure.connect(self.notifications.show_error)
        host.modelStateChanged.connect(self._on_model_state)
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
        self.nav.setFixedWidth(168)
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
        self.notifications = NotificationArea()
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
        if self.specs:
            self.nav.setCurrentRow(0)

    def _dictate_anywhere(self):
        """Global shortcut, tray icon and caption overlay around the Dictation panel."""
        if "dictation" not in self.panels:
            return None
        from .dictate_anywhere import DictateAnywhere

        return DictateAnywhere(self, self.panels["dictation"], self.qsettings)

    @staticmethod
    def _shortcut_text(number: int) -> str:
        return QKeySequence(f"Ctrl+{number}").toString(QKeySequence.SequenceFormat.NativeText)

    def _action(self, text: str, icon: str, shortcut, slot, tip: str = "") -> QAction:
        action = QAction(theme.icon(icon), text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip or text.replace("…", ""))
        action.triggered.connect(slot)
        self.addAction(action)  # shortcuts work even where the menu bar is hidden
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open…", "SP_DialogOpenButton", QKeySequence.StandardKey.Open,
                                        self.open_files, "Add audio or video files to the transcription queue")
        self.preferences_action = self._action("&Preferences…", "settings", QKeySequence("Ctrl+,"),
                                               self.show_preferences, "Devices, models and threads")
        self.preferences_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = self._action("&Quit", "SP_DialogCloseButton", QKeySequence("Ctrl+Q"), self.close)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.find_action = self._action("&Find…", "search", QKeySequence.StandardKey.Find, self.focus_search,
                                        "Search your documents and transcripts")
        self.panel_actions = []
        for number, spec in enumerate(self.specs, start=1):
            action = self._action(spec.title, spec.icon, QKeySequence(f"Ctrl+{number}") if number < 10 else None,
                                  lambda _=False, key=spec.key: self.show_panel(key), spec.tooltip)
            self.panel_actions.append(action)
        about = self._action("&About Ferrum Desktop", "SP_MessageBoxInformation", None, self.show_about)

        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.find_action)
        edit_menu.addSeparator()
        edit_menu.addAction(self.preferences_action)
        view_menu = bar.addMenu("&View")
        for action in self.panel_actions:
            view_menu.addAction(action)
        bar.addMenu("&Help").addAction(about)

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
        """Send files to the Transcribe panel's queue (from Open…, drops or the command line)."""
        panel = self.panels.get("transcribe")
        if panel is None or not paths:
            return False
        self.show_panel("transcribe")
        panel.enqueue([Path(p) for p in paths])
        return True

    def open_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Add files to transcribe", str(Path.home()), MEDIA_FILTER)
        self.enqueue(paths)

    @staticmethod
    def _local_paths(mime) -> list[str]:
        return [url.toLocalFile() for url in mime.urls() if url.isLocalFile()] if mime.hasUrls() else []

    def dragEnterEvent(self, event):  # noqa: N802 - Qt override
        if self._local_paths(event.mimeData()) and "transcribe" in self.panels:
            event.acceptProposedAction()

    def dragMoveEvent(self, event):  # noqa: N802
        if self._local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event):  # noqa: N802
        if self.enqueue(self._local_paths(event.mimeData())):
            event.acceptProposedAction()

    # ---- dialogs -------------------------------------------------------------------------
    def show_preferences(self):
        from .preferences import PreferencesDialog

        dialog = PreferencesDialog(self.host, self.qsettings or QSettings(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self) -> None:
        QMessageBox.about(self, "About Ferrum Desktop",
                          "<h3>Ferrum Desktop</h3><p>Speech-to-text and semantic search that run "
                          "entirely on your own machine.</p><p>Whisper and BERT executors modelled on "
                          "Ferrum's inference engine.</p>")

    def _on_model_state(self, name: str, state: str, message: str) -> None:
        indicator = self.indicators.get(name)
        if indicator is not None:
            indicator.set_state(state, message)

    def closeEvent(self, event):  # noqa: N802
        if self.qsettings is not None:
            self.qsettings.setValue("window/geometry", self.saveGeometry())
        if self.anywhere is not None:
            self.anywhere.close()
        for panel in self.panels.values():
            shutdown = getattr(panel, "shutdown", None)
            if shutdown is not None:
                shutdown()
        super().closeEvent(event)
