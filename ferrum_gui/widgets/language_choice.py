"""The Language and Task boxes, which follow what the loaded Whisper model can do (the Transcribe panel's
options row and the Dictation panel each have them).

An English-only model offers English and Transcribe only. Leaving it for a multilingual model goes back
to Auto-detect: that English was the model's limit, not the user's choice, and kept it would misread
every other language.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

# Whisper's most used languages first; the model accepts ~100 (any ISO 639-1 code typed in).
LANGUAGES = [("Auto-detect", None), ("English", "en"), ("German", "de"), ("French", "fr"),
             ("Spanish", "es"), ("Italian", "it"), ("Portuguese", "pt"), ("Dutch", "nl"),
             ("Polish", "pl"), ("Russian", "ru"), ("Ukrainian", "uk"), ("Turkish", "tr"),
             ("Arabic", "ar"), ("Hindi", "hi"), ("Chinese", "zh"), ("Japanese", "ja"), ("Korean", "ko")]
TASKS = [("Transcribe", "transcribe"), ("Translate", "translate")]  # Translate: into English (tooltip)
_ENGLISH_ONLY = ([("English", "en")], TASKS[:1])


def labelled(layout: QHBoxLayout, label: str, widget: QWidget) -> None:
    """``label`` (its buddy: ``widget``) and ``widget`` side by side in ``layout``."""
    caption = QLabel(label)
    caption.setBuddy(widget)
    layout.addWidget(caption)
    layout.addWidget(widget)


class LanguageChoice(QWidget):
    """``language`` and ``task`` combo boxes (item data: the code; None = Auto-detect)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.language = QComboBox()
        self.task = QComboBox()
        self.english_only = False   # the boxes show the English-only model's fixed choice
        self.multilingual: bool | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        labelled(layout, "Language", self.language)
        labelled(layout, "Task", self.task)
        self._fill(LANGUAGES, TASKS)
        self.set_multilingual(None)

    def set_multilingual(self, multilingual: bool | None) -> None:
        """What the loaded model says of itself; None while it loads (the boxes wait for it)."""
        self.multilingual = multilingual
        if multilingual is False and not self.english_only:
            self.english_only = True   # before filling: listeners reading the choice see it as forced
            self._fill(*_ENGLISH_ONLY)
        elif multilingual and self.english_only:
            self.english_only = False
            self._fill(LANGUAGES, TASKS)  # Auto-detect, Transcribe
        for box in (self.language, self.task):
            box.setEnabled(bool(multilingual))
        tip = {None: "Waiting for the speech model to load", False: "This model understands English only"}.get(
            multilingual, "")
        self.language.setToolTip(tip or "Spoken language; auto-detect for multilingual models")
        self.task.setToolTip(tip or "Transcribe in the spoken language, or translate the speech into English text")

    def chosen_language(self) -> str | None:
        """The language the user chose (None: Auto-detect); an English-only model's English is not one."""
        return None if self.english_only else self.language.currentData()

    def _fill(self, languages, tasks) -> None:
        for box, items in ((self.language, languages), (self.task, tasks)):
            box.clear()
            for name, code in items:
                box.addItem(name, code)
