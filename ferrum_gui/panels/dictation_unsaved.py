"""The question asked before unsaved dictation is thrown away (Clear, quitting the app): Save to the
history, Discard, or Cancel. Window-modal and non-blocking, like the other questions of the app."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

Button = QMessageBox.StandardButton


def ask_save_or_discard(parent: QWidget, title: str, sessions: int, on_save: Callable[[], object],
                        on_discard: Callable[[], object]) -> QMessageBox:
    """Open the question; ``on_save`` / ``on_discard`` run on that answer, nothing on Cancel."""
    what = "this dictation" if sessions == 1 else f"these {sessions} dictation sessions"
    box = QMessageBox(QMessageBox.Icon.Warning, title, f"Save {what} to the transcript history first?",
                      Button.Save | Button.Discard | Button.Cancel, parent.window())
    box.setInformativeText("Discarding deletes the text and the recording; they cannot be brought back.")
    save, discard = box.button(Button.Save), box.button(Button.Discard)
    save.setText("Save to history")
    discard.setText("Discard")
    box.setDefaultButton(Button.Save)
    box.setEscapeButton(Button.Cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.buttonClicked.connect(lambda button: on_save() if button == save
                              else on_discard() if button == discard else None)
    box.open()
    return box
