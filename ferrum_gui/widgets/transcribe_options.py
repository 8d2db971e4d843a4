"""The per-job options row of the Transcribe panel: model, language, task, word timestamps, speakers.

Choices are remembered (``save``/``restore`` with a QSettings); a new option is one more entry in
``_persisted()`` and one more widget in the row. Language and Task follow what the loaded model
can do (``LanguageChoice``): an English-only model (bundled or imported from a folder) fixes them to
English/Transcribe, and that fixed English is not remembered as a choice.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QWidget

from executors.whisper.options import TranscribeOptions

from .language_choice import LanguageChoice, labelled

SPEAKER_COUNTS = [("auto", None)] + [(str(n), n) for n in range(2, 9)]
_GROUP = "transcribe/options"


MODEL_LABEL_CHARS = 24


def model_label(ref: str) -> str:
    """A short name for the model box: a bundled name as it is, a folder by its own name (a long one
    shortened in the middle; the full path is the item's tooltip)."""
    path = Path(ref).expanduser()
    name = path.name if path.is_absolute() or "/" in ref or "\\" in ref else ref
    if len(name) > MODEL_LABEL_CHARS:
        half = (MODEL_LABEL_CHARS - 1) // 2
        name = f"{name[:half]}…{name[-half:]}"
    return f"{name} (folder)" if name != ref else name


class TranscribeOptionsBar(QWidget):
    """``modelChosen(ref)`` when the user picks another Whisper model."""

    modelChosen = Signal(str)
    changed = Signal()  # a remembered option changed (save it)

    def __init__(self, models: list[str], current_model: str, parent=None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.model = QComboBox()
        self.model.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)  # labels are short
        self.choice = LanguageChoice()
        self.language, self.task = self.choice.language, self.choice.task
        self.word_timestamps = QCheckBox("Word times")
        self.word_timestamps.setToolTip("Word timestamps: time every word (slower); the times show next to each segment")
        self.speakers = QCheckBox("Speakers")
        self.speakers.setToolTip("Label who speaks when (times every word to split turns)")
        self.speaker_count = QComboBox()
        for name, count in SPEAKER_COUNTS:
            self.speaker_count.addItem(name, count)
        self.speaker_count.setToolTip("How many people speak; 'auto' finds out")
        self.speaker_count.setEnabled(False)
        self.speakers.toggled.connect(self.speaker_count.setEnabled)
        labelled(layout, "Model", self.model)
        layout.addWidget(self.choice)
        layout.addWidget(self.word_timestamps)
        layout.addWidget(self.speakers)
        layout.addWidget(self.speaker_count)
        layout.addStretch(1)
        self.set_models(models, current_model)
        self.model.activated.connect(lambda i: self.modelChosen.emit(self.model.itemData(i)))
        self.model.currentIndexChanged.connect(lambda _i: self.model.setToolTip(self._model_tip()))
        for signal in (self.language.currentIndexChanged, self.task.currentIndexChanged, self.word_timestamps.toggled,
                       self.speakers.toggled, self.speaker_count.currentIndexChanged):
            signal.connect(lambda *_: self.changed.emit())

    # --- models --------------------------------------------------------------------------

    def set_models(self, models: list[str], current: str, multilingual: bool | None = None) -> None:
        """Offer ``models`` with ``current`` chosen; ``multilingual`` is what the loaded model says of
        itself (None while it loads: language and task wait for it)."""
        self.model.blockSignals(True)
        self.model.clear()
        for ref in dict.fromkeys([current, *models]):
            self.model.addItem(model_label(ref), ref)
            self.model.setItemData(self.model.count() - 1, ref, Qt.ItemDataRole.ToolTipRole)  # the full path
        self.model.setCurrentIndex(0)
        self.model.blockSignals(False)
        self.model.setToolTip(self._model_tip())
        self.choice.set_multilingual(multilingual)

    def current_model(self) -> str:
        return self.model.currentData()

    def _model_tip(self) -> str:
        ref = self.model.currentData() or ""
        return f"Whisper model for new jobs: {ref}\n(choosing another reloads the model)"

    # --- options -------------------------------------------------------------------------

    def options(self) -> TranscribeOptions:
        options = TranscribeOptions(language=self.language.currentData(), task=self.task.currentData(),
                                    word_timestamps=self.word_timestamps.isChecked())
        if self.speakers.isChecked():
            from executors.diarization import DiarizationOptions

            options.word_timestamps = True  # speaker changes inside a segment are found between words
            options.extra["speakers"] = DiarizationOptions(num_speakers=self.speaker_count.currentData())
        return options

    def _persisted(self) -> dict:
        """key → (read the widget, set the widget) for every remembered option."""
        def check(box):
            return box.isChecked, lambda v: box.setChecked(str(v).lower() in ("true", "1"))
        return {"language": (self.choice.chosen_language, lambda v: _select(self.language, v)),
                "task": (self.task.currentData, lambda v: _select(self.task, v)),
                "word_timestamps": check(self.word_timestamps), "speakers": check(self.speakers),
                "speaker_count": (self.speaker_count.currentData, lambda v: _select(self.speaker_count, v))}

    def save(self, settings: QSettings) -> None:
        for key, (read, _write) in self._persisted().items():
            value = read()
            settings.setValue(f"{_GROUP}/{key}", "" if value is None else value)

    def restore(self, settings: QSettings) -> None:
        """Set the options saved last time; an English-only model's boxes offer nothing else to set."""
        for key, (_read, write) in self._persisted().items():
            if settings.contains(f"{_GROUP}/{key}"):
                write(settings.value(f"{_GROUP}/{key}"))


def _select(combo: QComboBox, value) -> None:
    """Select the item whose data is ``value`` ("" stands for None, e.g. auto-detect)."""
    wanted = value or None
    for i in range(combo.count()):
        if combo.itemData(i) == wanted or (wanted is not None and str(combo.itemData(i)) == str(wanted)):
            combo.setCurrentIndex(i)
            return
