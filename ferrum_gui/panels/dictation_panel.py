"""Dictation panel: pick an input, watch the level, start/stop (button, Ctrl+D, or hold to talk);
the language and task follow the loaded model (Auto-detect or a language on a multilingual one,
English on an English-only one); committed text in the normal colour with the tentative tail greyed
after it; latency per utterance; copy, clear, and save the sessions shown (each its own FLAC +
transcript) into the transcript history. Clearing or quitting with unsaved sessions asks first (Save,
Discard, Cancel); sessions a crashed run left unsaved are shown again at start."""

from __future__ import annotations

import asyncio
import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from executors.core.errors import FerrumError

from ..anywhere.panel_typing import PanelTyping
from ..widgets.language_choice import LanguageChoice
from ..widgets.level_meter import LevelMeter
from ..widgets.tasks import TaskSet
from .dictation_unsaved import ask_save_or_discard

START_SHORTCUT = "Ctrl+D"
_DEVICE_KEY = "dictation/input"


class DictationPanel(QWidget):
    stateChanged = Signal(str)   # "idle" | "starting" | "listening" | "stopping"
    eventReceived = Signal(object)   # every dictation event but Level, after the panel shows it

    def __init__(self, host, parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self._tasks = TaskSet(host.failure.emit)
        self.state = "idle"
        self.committed: list[str] = []
        self.tentative = ""
        self.latencies: list[float] = []
        self.utterances: list[tuple[float, float, str]] = []
        self.sessions: list = []    # DictationSession of each run shown since the last Clear
        self._held = False
        self._settings = getattr(parent, "qsettings", None)  # remembers the chosen input
        self._devices: dict[str, object] = {}   # combo key -> InputDevice
        self._rendering = False
        self.discard_question: QMessageBox | None = None   # open while asking about unsaved dictation

        self.device = QComboBox()
        self.device.setToolTip("Audio input used for dictation")
        self.device.setMinimumWidth(220)
        self.device.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.device.setMinimumContentsLength(18)
        self.device.activated.connect(self._remember_device)
        refresh = QToolButton()
        refresh.setText("↻")
        refresh.setToolTip("Look for audio inputs again")
        refresh.clicked.connect(self.refresh_devices)
        self.meter = LevelMeter()
        self.start_button = QPushButton("Start")
        self.start_button.setCheckable(True)
        self.start_button.setToolTip(f"Start or stop dictation ({START_SHORTCUT})")
        self.start_button.clicked.connect(self.toggle)
        self.hold_button = QPushButton("Hold to talk")
        self.hold_button.setToolTip("Dictate while the button is held down")
        self.hold_button.pressed.connect(self._hold_pressed)
        self.hold_button.released.connect(self._hold_released)
        top = QHBoxLayout()
        top.addWidget(QLabel("Input:"))
        top.addWidget(self.device, 1)
        top.addWidget(refresh)
        top.addWidget(self.meter, 1)
        top.addWidget(self.start_button)
        top.addWidget(self.hold_button)

        self.view = QTextBrowser()
        self.view.setPlaceholderText(f"Press Start ({START_SHORTCUT}) or hold “Hold to talk” and speak. "
                                     "When you stop, you can correct the text here before saving it.")
        self.view.textChanged.connect(self._on_text_edited)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.latency_label = QLabel("Latency: –")
        self.copy_button = QPushButton("Copy all")
        self.copy_button.clicked.connect(self.copy_all)
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear)
        self.save_button = QPushButton("Save to history")
        self.save_button.setToolTip("Keep each session's audio (FLAC) and transcript in the transcript history")
        self.save_button.clicked.connect(lambda: self._tasks.spawn(self.save(), "saving the dictation"))
        bottom = QHBoxLayout()
        bottom.addWidget(self.latency_label, 1)
        bottom.addWidget(self.copy_button)
        bottom.addWidget(self.clear_button)
        bottom.addWidget(self.save_button)

        self.choice = LanguageChoice()
        self.language, self.task = self.choice.language, self.choice.task
        # dictating into other apps: the typing switch here; the main window adds captions etc.
        self.typing = PanelTyping(self)
        self.options_row = QHBoxLayout()
        self.options_row.addWidget(self.choice)
        self.options_row.addWidget(self.typing.switch)
        self.options_row.addStretch(1)

        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(self.options_row)
        layout.addWidget(self.message)
        layout.addWidget(self.view, 1)
        layout.addLayout(bottom)
        shortcut = QShortcut(QKeySequence(START_SHORTCUT), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.toggle)
        host.modelStateChanged.connect(self._on_model_state)
        self.choice.set_multilingual(host.multilingual())
        self._update_buttons()
        self.refresh_devices()
        self._tasks.spawn(self._restore(), "restoring unsaved dictation")

    def _on_model_state(self, name: str, state: str, _message: str) -> None:
        if name == "whisper" and state == "ready":
            self.choice.set_multilingual(self.host.multilingual())

    # ---- devices ---------------------------------------------------------------------------
    def refresh_devices(self) -> None:
        self._tasks.spawn(self._load_devices(), "listing audio inputs")

    async def _load_devices(self) -> None:
        try:
            devices = await self.host.input_devices()
        except FerrumError as exc:
            devices = []
            self.show_message(str(exc))
            exc._ferrum_reported = True
        self.device.clear()
        self._devices = {d.key: d for d in devices}
        saved = str(self._settings.value(_DEVICE_KEY, "")) if self._settings is not None else ""
        for d in devices:
            self.device.addItem(f"{d.name}{'  (default)' if d.is_default else ''}", d.key)
            self.device.setItemData(self.device.count() - 1, f"{d.name} — {d.hostapi}", Qt.ItemDataRole.ToolTipRole)
        chosen = saved if saved in self._devices else next((d.key for d in devices if d.is_default), None)
        if chosen is not None:
            self.device.setCurrentIndex(self.device.findData(chosen))  # the input chosen last time, if still there
        if devices:
            self.show_message("")
        elif not self.message.text():
            self.show_message("No microphone found: connect one (or enable it in the system sound settings) "
                              "and press ↻.")
        self._update_buttons()

    # ---- start / stop --------------------------------------------------------------------
    def toggle(self) -> None:
        if self.state == "idle":
            self.start()
        else:
            self.stop()

    def start(self, source=None) -> None:
        """Start a session from the chosen device, or from ``source`` (e.g. a FileSource)."""
        if self.state != "idle":
            return
        self._set_state("starting")
        self._tasks.spawn(self._session(source), "dictating")

    def start_file(self, path, speed: float = 1.0) -> None:
        from executors.dictation import FileSource

        self.start(FileSource(path, speed=speed))

    def stop(self) -> None:
        if self.state in ("starting", "listening"):
            self._set_state("stopping")
            self.host.stop_dictation()

    def _hold_pressed(self) -> None:
        if self.state == "idle":
            self._held = True
            self.start()

    def _hold_released(self) -> None:
        if self._held:
            self._held = False
            self.stop()

    async def _session(self, source) -> None:
        from executors.dictation import DictationOptions, MicrophoneSource

        try:
            if source is None:
                if self.device.count() == 0:
                    await self._load_devices()
                if self.device.count() == 0:
                    raise_no_device()
                source = MicrophoneSource(self._devices[self.device.currentData()])
            if self.state == "stopping":
                return
            self._set_state("listening")
            self.show_message(f"Listening on {source.name}…")
            options = DictationOptions(language=self.language.currentData(), task=self.task.currentData())
            session = await self.host.dictate(source, options, self.on_event)  # recorded by the engine
            self.sessions.append(session)
            summary = session.summary
            self.show_message(f"Stopped: {summary.utterances} utterance(s), {summary.audio_seconds:.1f} s of audio.")
        except FerrumError as exc:
            if getattr(exc, "session", None) is not None:
                self.sessions.append(exc.session)
            self.show_message(str(exc))
            raise
        finally:
            self.meter.reset()
            self._set_state("idle")

    # ---- events (GUI thread) ---------------------------------------------------------------
    def on_event(self, event) -> None:
        from executors.dictation import (
            Committed,
            Level,
            Overrun,
            Tentative,
            UtteranceEnd,
        )

        if isinstance(event, Level):
            self.meter.set_level(event.rms)
            return
        if isinstance(event, Committed):
            self.committed.append(event.text)
            self.tentative = ""
        elif isinstance(event, Tentative):
            self.tentative = event.text
        elif isinstance(event, UtteranceEnd):
            self.latencies.append(event.latency)
            self.utterances.append((event.audio_start, event.audio_end, event.text))
            self.committed.append("\n")
            self._show_latency()
        elif isinstance(event, Overrun):
            self.show_message(f"Transcription fell behind: {event.dropped_seconds:.2f} s of audio were dropped.")
        self._render()
        self.eventReceived.emit(event)

    def _render(self) -> None:
        grey = self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text).name()
        body = html.escape(self.committed_text(with_breaks=True)).replace("\n", "<br>")
        if self.tentative:
            body += f' <span style="color:{grey}">{html.escape(self.tentative)}</span>'
        self._rendering = True
        try:
            self.view.setHtml(body)
        finally:
            self._rendering = False
        self.view.verticalScrollBar().setValue(self.view.verticalScrollBar().maximum())
        self._update_buttons()

    def _on_text_edited(self) -> None:
        """The user corrected the text (only possible between sessions): it is what Copy and Save take."""
        if self._rendering or self.state != "idle" or not self.utterances:
            return
        from executors.dictation import apply_session_edits

        shown = [s for s in self.sessions if s.utterances]
        for session, utterances in zip(shown, apply_session_edits([s.utterances for s in shown],
                                                                  self.view.toPlainText())):
            self.host.correct_dictation(session.id, utterances)
        self._show_sessions_text()
        self._update_buttons()

    def _show_sessions_text(self) -> None:
        self.utterances = [u for s in self.sessions if s.utterances for u in s.utterances]
        self.committed = [piece for _, _, text in self.utterances for piece in (text, "\n")]

    async def _restore(self) -> None:
        restored = await self.host.restore_dictation()
        if not restored:
            return
        self.sessions += restored
        self._show_sessions_text()
        self._render()
        self.show_message(f"Restored {len(restored)} unsaved dictation session(s) that Ferrum Desktop could not "
                          "save when it last stopped: save them to the history, or clear them.")

    def _remember_device(self, _index: int = 0) -> None:
        if self._settings is not None and self.device.currentData():
            self._settings.setValue(_DEVICE_KEY, self.device.currentData())

    def _show_latency(self) -> None:
        last = self.latencies[-1] * 1000
        ordered = sorted(self.latencies)
        p50 = ordered[len(ordered) // 2] * 1000
        self.latency_label.setText(f"Latency: last {last:.0f} ms · median {p50:.0f} ms · {len(ordered)} utterance(s)")

    # ---- text actions -----------------------------------------------------------------------
    def committed_text(self, with_breaks: bool = False) -> str:
        text = ""
        for piece in self.committed:
            if piece == "\n":
                text = text.rstrip() + ("\n" if with_breaks else " ")
            else:
                text += piece + " "
        return text.strip() if not with_breaks else text.rstrip(" ")

    def tentative_text(self) -> str:
        return self.tentative

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.committed_text(with_breaks=True).strip())

    def unsaved_sessions(self) -> list:
        return [s for s in self.sessions if (s.record_id is None or s.corrected) and s.utterances]

    def has_unsaved(self) -> bool:
        return bool(self.unsaved_sessions()) or (self.state != "idle" and bool(self.committed))

    def clear(self) -> QMessageBox | None:
        """Clear the text; with unsaved sessions, first ask whether to save or discard them (returns
        the question)."""
        if not self.has_unsaved():
            self._forget()
            return None
        return self._ask("Clear the dictation", lambda: None)

    def confirm_close(self, close) -> bool:
        """Whether the app may quit now: True when no dictation would be lost; else asks, and calls
        ``close()`` once the dictation is saved or discarded."""
        if not self.has_unsaved():
            return True
        if self.discard_question is None:
            self._ask("Quit Ferrum Desktop", close)
        return False

    def _ask(self, title: str, then) -> QMessageBox:
        def save() -> None:
            self._tasks.spawn(self._save_then(then), "saving the dictation")

        def discard() -> None:
            self.discard_question = None  # answered: quitting must not close it a second time
            self._forget()
            then()

        pending = len(self.unsaved_sessions()) + (self.state != "idle")
        box = ask_save_or_discard(self, title, pending, save, discard)
        box.finished.connect(lambda _result: setattr(self, "discard_question", None))
        self.discard_question = box
        return box

    async def _save_then(self, then) -> None:
        if self.state != "idle":  # what the running session heard is saved too
            self.stop()
            while self.state != "idle":
                await asyncio.sleep(0.05)
        await self.save()
        if not self.unsaved_sessions():
            self._forget()
            then()

    def _forget(self) -> None:
        """Clear the text, forgetting the sessions shown; unsaved ones go with their recordings."""
        unsaved = [s.id for s in self.sessions if s.record_id is None]
        if unsaved:
            self._tasks.spawn(self.host.discard_dictation(unsaved), "discarding the dictation")
        self.committed, self.tentative, self.latencies, self.utterances = [], "", [], []
        self.sessions = []
        self.latency_label.setText("Latency: –")
        self._render()

    async def save(self) -> list[int]:
        """Save every unsaved session shown, each as its own history record with its own recording."""
        pending = self.unsaved_sessions()
        if not pending:
            self.show_message("Nothing to save yet: dictate something first.")
            return []
        record_ids = await self.host.save_dictation([s.id for s in pending])
        self.show_message(f"Saved {len(record_ids)} session(s) to the transcript history.")
        self._update_buttons()
        return record_ids

    # ---- state ------------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _set_state(self, state: str) -> None:
        self.state = state
        self._update_buttons()
        self.stateChanged.emit(state)

    def _update_buttons(self) -> None:
        running = self.state != "idle"
        self.start_button.setChecked(running)
        self.start_button.setText("Stop" if running else "Start")
        self.device.setEnabled(not running)
        self.choice.setEnabled(not running)
        self.view.setReadOnly(running)  # corrections between sessions
        self.save_button.setEnabled(not running and bool(self.unsaved_sessions()))
        self.copy_button.setEnabled(bool(self.committed))

    def add_option(self, widget: QWidget) -> None:
        """A switch beside "Type into the focused app" (the main window adds its captions switch)."""
        self.options_row.insertWidget(self.options_row.count() - 1, widget)

    def shutdown(self) -> None:
        if self.discard_question is not None:
            self.discard_question.reject()
        self.typing.shutdown()
        self.host.stop_dictation(wait=True)
        self._tasks.cancel_all()


def raise_no_device():
    from executors.core.errors import NotFoundError

    raise NotFoundError("No microphone or other audio input device was found",
                        "connect a microphone, enable it in the system sound settings, then press ↻")
