"""The per-job options row of the Transcribe panel: model, language, task, word timestamps, speakers."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QWidget

from executors.whisper.options import TranscribeOptions

# Whisper's most used languages first; the model accepts ~100 (any ISO 639-1 code typed in).
LANGUAGES = [("Auto-detect", None), ("English", "en"), ("German", "de"), ("French", "fr"),
             ("Spanish", "es"), ("Italian", "it"), ("Portuguese", "pt"), ("Dutch", "nl"),
             ("Polish", "pl"), ("Russian", "ru"), ("Ukrainian", "uk"), ("Turkish", "tr"),
             ("Arabic", "ar"), ("Hindi", "hi"), ("Chinese", "zh"), ("Japanese", "ja"), ("Korean", "ko")]
TASKS = [("Transcribe", "transcribe"), ("Translate to English", "translate")]
SPEAKER_COUNTS = [("auto", None)] + [(str(n), n) for n in range(2, 9)]



class TranscribeOptionsBar(QWidget):
    """``modelChosen(ref)`` when the user picks another Whisper model."""

    modelChosen = Signal(str)

    def __init__(self, models: list[str], current_model: str, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.model = QComboBox()
        self.model.setToolTip("Whisper model used for new jobs (reloads the model)")
        self.language = QComboBox()
        self.language.setEditable(False)
        for name, code in LANGUAGES:
            self.language.addItem(name, code)
        self.task = QComboBox()
        for name, code in TASKS:
            self.task.addItem(name, code)
        self.word_timestamps = QCheckBox("Word timestamps")
        self.word_timestamps.setToolTip("Time every word (slower)")
        self.speakers = QCheckBox("Speakers")
        self.speakers.setToolTip("Label who speaks when (times every word to split turns)")
        self.speaker_count = QComboBox()
        for name, count in SPEAKER_COUNTS:
            self.speaker_count.addItem(name, count)
        self.speaker_count.setToolTip("How many people speak; 'auto' finds out")
        self.speaker_count.setEnabled(False)
        self.speakers.toggled.connect(self.speaker_count.setEnabled)
        for label, widget in (("Model", self.model), ("Language", self.language), ("Task", self.task)):
            caption = QLabel(label)
            caption.setBuddy(widget)
            layout.addWidget(caption)
            layout.addWidget(widget)
        layout.addWidget(self.word_timestamps)
        layout.addWidget(self.speakers)
        layout.addWidget(self.speaker_count)
        layout.addStretch(1)
        self.set_models(models, current_model)
        self.model.activated.connect(lambda _i: self.modelChosen.emit(self.model.currentText()))

    def set_models(self, models: list[str], current: str, multilingual: bool | None = None) -> None:
        """Offer ``models`` with ``current`` chosen; ``multilingual`` is what the loaded model says of
        itself (None while it loads: language and task wait for it)."""
        self.model.blockSignals(True)
        self.model.clear()
        self.model.addItems(list(dict.fromkeys([current, *models])))
        self.model.setCurrentText(current)
        self.model.blockSignals(False)
        self._apply_model_limits(multilingual)

    def _apply_model_limits(self, multilingual: bool | None) -> None:
        if multilingual is False:
            self.language.setCurrentIndex(self.language.findData("en"))
            self.task.setCurrentIndex(0)
        self.language.setEnabled(bool(multilingual))
        self.task.setEnabled(bool(multilingual))
        tip = {None: "Waiting for the speech model to load", False: "English-only model"}.get(multilingual, "")
        self.language.setToolTip(tip or "Spoken language; auto-detect for multilingual models")
        self.task.setToolTip(tip or "Translate speech in any language into English text")

    def options(self) -> TranscribeOptions:
        options = TranscribeOptions(language=self.language.currentData(), task=self.task.currentData(),
                                    word_timestamps=self.word_timestamps.isChecked())
        if self.speakers.isChecked():
            from executors.diarization import DiarizationOptions

            options.word_timestamps = True  # speaker changes inside a segment are found between words
            options.extra["speakers"] = DiarizationOptions(num_speakers=self.speaker_count.currentData())
        return options
